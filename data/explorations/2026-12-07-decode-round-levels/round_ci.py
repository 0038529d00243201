"""How wide a decode row's interval is, as the report makes it (lab.measure.stats.replicated_median_ci over its
samples, as if independent), beside the order-statistic interval over its rounds' medians (lab.measure.stats.
median_ci), at the rows of recorded runs whose rounds spread at least round_spread.SPREAD, hot; last, the ratio of the
two widths over those rows. No GPU.

    python round_ci.py RUN [RUN ...] > round_ci.txt
"""
import statistics
import sys

import numpy as np

from lab.measure import stats
from lab.measure.stats.replicated import replicated_median_ci
from round_spread import KEY, SPREAD, round_medians, unthrottled_samples

print("| run | shape | impl | samples | rounds | median µs | samples' interval | width | rounds' interval | width |")
print("|---|---|---|---:|---:|---:|---|---:|---|---:|")
ratios = []
for run in sys.argv[1:]:
    d = unthrottled_samples(run)
    d = d[d["mode"] == "hot"]
    medians = round_medians(d)
    for key, g in d.groupby(KEY):
        rounds = medians.loc[key].tolist()
        if len(rounds) < 2 or max(rounds) / min(rounds) < SPREAD:
            continue
        med = float(np.median(g.latency_us))
        lo, hi = replicated_median_ci({0: g.latency_us.tolist()})
        rlo, rhi = stats.median_ci(rounds)
        if hi > lo:
            ratios.append((rhi - rlo) / (hi - lo))
        shape = ",".join(str(v) for v in key[:-2])
        print(f"| {run} | {shape} | {key[-2]} | {len(g)} | {len(rounds)} | {med:.2f} | [{lo:.2f}, {hi:.2f}] | "
              f"{100 * (hi - lo) / med:.2f} % | [{rlo:.2f}, {rhi:.2f}] | {100 * (rhi - rlo) / med:.2f} % |")
print(f"\nThe rounds' interval over the samples', in width, at {len(ratios)} rows: "
      f"median {statistics.median(ratios):.2f}x, {min(ratios):.2f}x-{max(ratios):.2f}x.")
