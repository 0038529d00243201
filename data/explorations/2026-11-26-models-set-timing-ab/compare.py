"""The three A/Bs of this folder, from the run folders beside it: the models jobs' seconds per run (the
replicates' notes, with and without the first shape, which pays the process's warm-up), the GPU time
of the samples and of the work around them, each row's median against the other runs (mean of the
replicates' medians), and the SM clock the hot samples ran at; then the recorded runs with the 0.3 ms
sleep against the report's runs of stop 41, and the correctness stages of the runs before them (those
runs are no longer in the tree: what is read of them was copied from git history into history.json
and history-hot-summary.parquet, each with its commit and tree id).

    PYTHONPATH=. python data/explorations/2026-11-26-models-set-timing-ab/compare.py
"""
import json
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
CALL1 = {"graph capture (HEAD 62faf5f)": "20261126T102743Z-62faf5f",
         "torch.cuda.graph (base aec1bfe)": "20261126T103001Z-aec1bfe"}
CALL2 = {"0.3 ms sleep, first (HEAD 6183465)": "20261126T103735Z-6183465",
         "1 ms sleep (base 7476736)": "20261126T104024Z-7476736",
         "0.3 ms sleep, second (HEAD 6183465)": "20261126T104214Z-6183465"}
CALL3 = {"adaptive estimate, first (HEAD 00bb6c7)": "20261126T112041Z-00bb6c7",
         "five-launch estimate (base 7476736)": "20261126T112342Z-7476736",
         "adaptive estimate, second (HEAD 00bb6c7)": "20261126T112538Z-00bb6c7"}
KEY = ["impl", "B", "H", "S", "D", "causal", "H_kv", "dtype", "mode"]


def job_seconds(run):
    per = []
    for r in json.loads((HERE / run / "replicates.json").read_text())["timing"]["runs"]:
        notes = [n for n in r["notes"] if n.get("scope") == "models"]
        per.append((sum(n["seconds"] for n in notes), sum(n["seconds"] for n in notes[1:])))
    return per


def summary(run):
    from lab.measure import records
    from lab.studies import derived

    return derived.summary(records.RunRecord.open(str(HERE / run)))


def samples(run):
    return pd.read_parquet(HERE / run / "samples.parquet")


def gpu_work(s):
    """Seconds of GPU work, 3 replicates: the samples, and (from each row's median and turns) what
    the 1 ms-sleep harness spent around them: hot, 1 warm-up + 5 timed estimate launches and a sleep,
    one sleep a turn, the capture's replay; cold, 3 flush + launch estimates."""
    g = s.groupby(KEY + ["replicate"]).agg(lat=("latency_us", "median"), n=("latency_us", "size"),
                                           turns=("round", "nunique")).reset_index()
    hot, cold = g[g["mode"] == "hot"].copy(), g[g["mode"] == "cold"].copy()
    reps = np.maximum(1, np.minimum(500, 1000 // np.maximum(hot.lat, 0.5)))
    flush = 40.0  # us, an L2 flush (2 x 50 MB written)
    return {"hot samples": (hot.n * reps * hot.lat).sum() / 1e6,
            "hot estimates": (6 * hot.lat / 1e6 + 1e-3).sum(), "hot turn sleeps (1 ms)": hot.turns.sum() * 1e-3,
            "hot capture replays": (reps * hot.lat).sum() / 1e6, "hot turns": int(hot.turns.sum()),
            "cold samples": (cold.n * (cold.lat + flush)).sum() / 1e6,
            "cold estimates": (3 * (cold.lat + flush) / 1e6 + 1e-3).sum(), "cold turns": int(cold.turns.sum())}


def medians(s):
    return s[~s.throttled].groupby(KEY + ["replicate"]).latency_us.median().groupby(KEY).mean()


for title, runs in (("Call 1: HotTimer's capture", CALL1), ("Call 2: the hot sleep and the estimate", CALL2),
                    ("Call 3: the estimate alone (1 ms sleep)", CALL3)):
    print(f"== {title}")
    for name, run in runs.items():
        per = job_seconds(run)
        print(f"{name:38} {run}: models jobs {sum(a for a, _ in per):.1f} s, without the first shape "
              f"{sum(b for _, b in per):.1f} s (per replicate {[round(b, 1) for _, b in per]})")
    for name, run in runs.items():
        print(f"  GPU work (by the 1 ms harness's accounting), {name}:",
              {k: round(float(v), 1) for k, v in gpu_work(samples(run)).items()})
        hot_medians = medians(samples(run)).xs("hot", level="mode")
        print(f"    its hot rows' medians: {hot_medians.min():.0f} to {hot_medians.max():.0f} us")
    m = {name: medians(samples(run)) for name, run in runs.items()}
    names = list(m)
    for a, b in [(names[0], names[1])] + ([(names[2], names[1]), (names[0], names[2])] if len(names) > 2 else []):
        r = (m[a] / m[b]).dropna().reset_index(name="ratio")
        by = r.groupby("mode").ratio.agg(["median", "mean", "std"]).round(4)
        print(f"  latency {a} / {b}: {len(r)} rows\n{by.to_string()}")
        if len(names) > 2:
            ends = r[r.impl.isin(["longest_first_queue", "portable_model_inputs", "sdpa_cudnn", "sdpa_flash",
                                  "flex_attention"])]
            print("   by implementation, hot:", ends[ends["mode"] == "hot"].groupby("impl").ratio.median().round(4).to_dict())
    for name, run in runs.items():
        s, summ = samples(run), summary(run)
        g = s[s["mode"] == "hot"].groupby(KEY + ["replicate"]).latency_us
        spread = ((g.quantile(0.75) - g.quantile(0.25)) / g.median()).mean()
        capped = summ[summ.stopped_by == "cap"].groupby("mode").size().to_dict()
        print(f"  {name}: hot samples {int((s['mode'] == 'hot').sum())}, cold {int((s['mode'] == 'cold').sum())}; "
              f"hot IQR / median within a replicate {spread:.4f}; rows at the cap {capped}")
        print(f"  SM clock of the hot samples, {name}: mean {s[s['mode'] == 'hot'].sm_clock_mhz.mean():.0f} MHz, "
              f"median {s[s['mode'] == 'hot'].sm_clock_mhz.median():.0f}; cold {s[s['mode'] == 'cold'].sm_clock_mhz.mean():.0f}")
    print()


# --- the recorded runs: the two with the 0.3 ms sleep and two warm-up processes, against the report's
# --- runs, and the correctness stages of the runs before them (history.json: copied from git history)
HISTORY = json.loads((HERE / "history.json").read_text())
HOT_SUMMARY = pd.read_parquet(HERE / "history-hot-summary.parquet")


def recorded(run):
    """A recorded run's figures, from what history.json and history-hot-summary.parquet keep of it."""
    r = HISTORY["recorded"][run]
    stages, warm = r["stages.json"], r["flex_warmup.json"]
    models = sum(sum(per) for per in r["models_job_seconds"])
    hot = HOT_SUMMARY[HOT_SUMMARY["run"] == run]
    width = ((hot.ci_hi_us - hot.ci_lo_us) / hot.median_us).median()
    workers = warm.get("workers", 1)
    return (f"{run}: models jobs {models:.1f} s, warm-up {warm['seconds']:.1f} s ({workers} "
            f"process{'es' if workers > 1 else ''}), wait {stages.get('between', {}).get('flex_warmup_wait_s', 'not recorded')}, "
            f"correctness {stages['correctness_s']} s; hot rows: median CI width {100 * width:.2f} %, "
            f"{int((hot.stopped_by == 'cap').sum())} at the cap")


print("== The recorded runs")
for run in HISTORY["recorded"]:
    print(recorded(run))
print("correctness stages of the runs before (one warm-up process; build_s shows a warm machine):")
for run, r in HISTORY["earlier"].items():
    st = r["stages.json"]
    print(f"  {run}: build {st.get('build_s')} s, correctness {st.get('correctness_s')} s")
