"""How wide a decode row's interval is, as the report makes it (lab.measure.stats.replicated_median_ci over its
samples, as if independent), beside the order-statistic interval over its rounds' medians (lab.measure.stats.
median_ci), at the rows of recorded runs whose rounds spread at least SPREAD (round_spread.py's), hot. No GPU.

    python round_ci.py RUN [RUN ...] > round_ci.txt
"""
import sys

import numpy as np
import pandas as pd

from lab.measure import stats
from lab.measure.stats.replicated import replicated_median_ci

SPREAD = 1.02
KEY = ["B", "H", "H_kv", "D", "cache_len", "q_len", "mixed", "page_size", "impl"]

print("| run | shape | impl | samples | rounds | median µs | samples' interval | width | rounds' interval | width |")
print("|---|---|---|---:|---:|---:|---|---:|---|---:|")
for run in sys.argv[1:]:
    d = pd.read_parquet(f"data/runs/{run}/decode_samples.parquet")
    d = d[~d["throttled"] & (d["mode"] == "hot")]
    for key, g in d.groupby(KEY):
        rounds = g.groupby("round").latency_us.median().tolist()
        if len(rounds) < 2 or max(rounds) / min(rounds) < SPREAD:
            continue
        med = float(np.median(g.latency_us))
        lo, hi = replicated_median_ci({0: g.latency_us.tolist()})
        rlo, rhi = stats.median_ci(rounds)
        shape = ",".join(str(v) for v in key[:-1])
        print(f"| {run} | {shape} | {key[-1]} | {len(g)} | {len(rounds)} | {med:.2f} | [{lo:.2f}, {hi:.2f}] | "
              f"{100 * (hi - lo) / med:.2f} % | [{rlo:.2f}, {rhi:.2f}] | {100 * (rhi - rlo) / med:.2f} % |")
