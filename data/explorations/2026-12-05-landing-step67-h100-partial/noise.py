"""How precise can the sustained mode's speedups be on this H100? From the first two timing replicates of runs.tgz (no
GPU); from the repository root: PYTHONPATH=. python <this folder>/noise.py > <this folder>/noise.txt

Reads every sustained row of the run (20 shapes: issue 46's long and models sets; step 67, its parent, sdpa_cudnn and
flash_attn3 take turns of 400 ms, the first 150 ms not kept, at least three turns a row, lab.measure.timing) and
prints:
  1. the per-turn log ratio of step 67 to each peer (each turn's median, paired by round as the report pairs them):
     its SD around each (shape, replicate)'s mean, and the SD of the replicates' means against what the turns' SD
     alone predicts for three turns (equal: no replicate effect beyond the turns);
  2. where the turn-to-turn noise lives: the SD of a turn's four quarters (about 60 ms of samples each) around the
     turn's mean, their mean drift along the turn, the lag-1 autocorrelation of the 5 ms samples within a turn, and
     how a turn's latency follows its one NVML clock reading;
  3. the 95 % half-width a run would give a ratio with T turns a row and R replicates, if the per-turn ratio SD is
     the one measured in 1 and replicates add nothing (as 1 finds): t_{R-1} * sd / sqrt(T R) (lab.measure.stats
     .replicated.random_effects' df where the replicates' spread decides), with the sustained mode's GPU seconds a
     replicate at the 20 shapes and four rows (a turn 0.4 s, a lead-in 1 s a shape).
"""

import math
import tarfile
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

HERE = Path(__file__).resolve().parent
STEP = "uniform_row0_d128"
SHAPE = ["B", "H", "S", "D", "causal", "H_kv", "dtype"]
TURN = SHAPE + ["replicate", "round", "impl"]


def sustained_samples() -> pd.DataFrame:
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(HERE / "runs.tgz") as t:
            t.extractall(tmp, filter="data")
        d = pd.read_parquet(next((Path(tmp) / "data" / "runs").iterdir()) / "samples.parquet")
        d = d[d["replicate"].isin((0, 1))]  # the two replicates this analysis was written on (the third came later)
    return d[d["mode"] == "sustained"].copy()


def main() -> None:
    s = sustained_samples()
    turns = s.groupby(TURN)["latency_us"].median().unstack("impl")
    shapes = len(turns.groupby(level=SHAPE))
    print(f"{len(s)} sustained samples, {shapes} shapes, {len(turns)} rounds, rows {list(turns.columns)}\n")
    print("1. Per-turn log ratio of step 67 to each peer (percent)")
    sd_fa3 = None
    for peer in [c for c in turns.columns if c != STEP]:
        lr = np.log(turns[peer] / turns[STEP]).dropna()
        cell = lr.groupby(level=SHAPE + ["replicate"])
        dev = lr - cell.transform("mean")
        sd = math.sqrt(float((dev ** 2).sum()) / float((cell.size() - 1).sum()))
        reps = cell.mean().unstack("replicate")
        between = math.sqrt(float(((reps[0] - reps[1]) ** 2 / 2).mean()))
        print(f"   {peer}: turn SD {sd * 100:.2f}; SD of the replicates' means {between * 100:.2f}, "
              f"the turns alone predict {sd / math.sqrt(3) * 100:.2f}")
        sd_fa3 = sd if peer == "flash_attn3" else sd_fa3
    lat = np.log(turns)
    dev = lat - lat.groupby(level=SHAPE + ["replicate"]).transform("mean")
    print("   each row's own per-turn log latency SD: "
          + ", ".join(f"{k} {v:.2f}" for k, v in (np.sqrt((dev ** 2).mean() * 3 / 2) * 100).items()))

    print("\n2. Where the noise lives")
    s["i"] = s.groupby(TURN).cumcount()
    s["q"] = (4 * s["i"] // s.groupby(TURN)["latency_us"].transform("size")).astype(int)
    q = np.log(s.groupby(TURN + ["q"])["latency_us"].median().unstack("q"))
    within = q.sub(q.mean(axis=1), axis=0)
    print(f"   quarters of a turn around its mean: SD {math.sqrt(float((within ** 2).sum().sum()) / (within.size - len(within))) * 100:.2f} %; "
          "mean drift by quarter " + ", ".join(f"{v * 100:+.2f}" for v in within.mean()) + " %")
    s["ll"] = np.log(s["latency_us"])
    s["dev"] = s["ll"] - s.groupby(TURN)["ll"].transform("mean")
    s["lag"] = s.groupby(TURN)["dev"].shift(1)
    ok = s.dropna(subset=["lag"])
    print(f"   5 ms samples within a turn: SD {s['dev'].std() * 100:.2f} %, lag-1 autocorrelation "
          f"{np.corrcoef(ok['dev'], ok['lag'])[0, 1]:.3f}")
    c = s.groupby(TURN).agg(lat=("ll", "mean"), clk=("sm_clock_mhz", "median"))
    c["clk"] = np.log(c["clk"])
    c = c - c.groupby(level=[k for k in TURN if k != "round"]).transform("mean")
    print(f"   a turn's log latency against its NVML clock reading: correlation {np.corrcoef(c['lat'], c['clk'])[0, 1]:.3f}")

    print(f"\n3. Projected 95 % half-width of step 67 / flash_attn3 (turn SD {sd_fa3 * 100:.2f} %), and the sustained "
          "mode's GPU time a replicate at 20 shapes x 4 rows")
    print("| turns a row | replicates | half-width | sustained s a replicate | sustained s a run |\n|---:|---:|---:|---:|---:|")
    for T in (3, 6, 10, 20):
        for R in (3, 5):
            half = stats.t.ppf(0.975, R - 1) * sd_fa3 / math.sqrt(T * R)
            sec = 20 * (1.0 + T * 4 * 0.4)
            print(f"| {T} | {R} | {half * 100:.1f} % | {sec:.0f} | {sec * R:.0f} |")


if __name__ == "__main__":
    main()
