"""Each pair's ratios round by round from blocks.csv (cap.py's output), with the speed's 95 % t-interval over the
rounds (log scale), and the landing's sustained turns at the same shapes for comparison when its run folder is given.

    python rounds.py blocks.csv [data/runs/<landing run>]
"""
import sys

import numpy as np
import pandas as pd
from scipy import stats

from lab.kernels.shape import Shape

OURS, PEER = "uniform_row0_d128", "flash_attn3"


def interval(logs):
    m, h = logs.mean(), stats.t.ppf(0.975, len(logs) - 1) * logs.std(ddof=1) / np.sqrt(len(logs))
    return f"{np.exp(m):.3f} [{np.exp(m - h):.3f}, {np.exp(m + h):.3f}]"


blocks = pd.read_csv(sys.argv[1])
print("cap.py: speed = FA3's time / ours, clock = ours / FA3's (mean of the 2 ms reads), one column a round")
for shape, g in blocks.groupby("shape", sort=False):
    o, f = (g[g.impl == i].set_index("round") for i in (OURS, PEER))
    speed, clock = np.log(f.t_us / o.t_us), np.log(o.clk_mean / f.clk_mean)
    cycles = np.log(o.t_us * o.clk_mean / (f.t_us * f.clk_mean))
    print(f"\n{shape}: speed {interval(speed)}, clock {interval(clock)}, cycles {interval(cycles)}")
    print("  speed  " + " ".join(f"{x:.3f}" for x in np.exp(speed)))
    print("  clock  " + " ".join(f"{x:.3f}" for x in np.exp(clock)))
    print(f"  slope of log speed on log clock over the rounds: {np.polyfit(clock, speed, 1)[0]:.2f}")

if len(sys.argv) > 2:
    s = pd.read_parquet(f"{sys.argv[2]}/samples.parquet")
    s = s[(s["mode"] == "sustained") & s.impl.isin([OURS, PEER])]
    print("\nThe lab run's sustained turns (median a turn; speed FA3's over ours; the clock: a turn's mean after its "
          "settle where recorded, else one NVML read a turn):")
    for key, g in s.groupby(["B", "H", "S", "D", "causal", "H_kv", "dtype"]):
        label = Shape(*map(int, key[:4]), bool(key[4]), int(key[5]), "bf16" if key[6] == "bfloat16" else "fp16").tuple_label
        if label not in set(blocks["shape"]):
            continue
        # a turn's mean clock after its settle where the run records it (from 2026-12-05), else its one reading
        clk = "sm_clock_mean_mhz" if g.get("sm_clock_mean_mhz") is not None and g["sm_clock_mean_mhz"].notna().any() \
            else "sm_clock_mhz"
        t = g.groupby(["replicate", "round", "impl"]).agg(lat=("latency_us", "median"), clk=(clk, "median"))
        t = t.unstack("impl")
        speed = np.log(t[("lat", PEER)] / t[("lat", OURS)])
        clock = np.log(t[("clk", OURS)] / t[("clk", PEER)])
        print(f"{label}: speed {interval(speed)} over {len(speed)} turns, clock {interval(clock)}")
