"""Per-job wall times (and ms a block) of replay_jobs.py's processes side by side, then the medians of
each (job, impl, mode) compared between them: python compare_replays.py DIR LABEL ..."""
import json
import sys
from pathlib import Path

import numpy as np

d, labels = Path(sys.argv[1]), sys.argv[2:]
runs = {lab: json.loads((d / f"{lab}.json").read_text()) for lab in labels if (d / f"{lab}.json").exists()}
print(f"{'job':>4} {'shape':<36}" + "".join(f" {lab + ' ' + r.get('hold', 'sleep')[:5]:>11} {'ms/blk':>7}" for lab, r in runs.items()))
first = next(iter(runs.values()))
for k, j in enumerate(first["jobs"]):
    print(f"{j['job']:>4} {j['shape']:<36}" + "".join(
        f" {r['jobs'][k]['wall_s']:>11.2f} {1e3 * r['jobs'][k]['wall_s'] / max(1, r['jobs'][k]['blocks']):>7.2f}"
        for r in runs.values()))
print("jobs total s", {lab: round(sum(j["wall_s"] for j in r["jobs"]), 2) for lab, r in runs.items()},
      "startup", {lab: r["startup_s"] for lab, r in runs.items()})
med = {lab: {(m["job"], m["impl"], m["mode"]): m["median_us"] for m in r.get("medians", [])} for lab, r in runs.items()}
pairs = [(a, b) for i, a in enumerate(runs) for b in list(runs)[i + 1:]]
for a, b in pairs:
    for mode in ("hot", "cold"):
        keys = [k for k in med[a] if k in med[b] and k[2] == mode]
        r = np.array([med[b][k] / med[a][k] for k in keys])
        if len(r):
            q = np.quantile(r, [0.05, 0.5, 0.95])
            print(f"{b}/{a} ({runs[b].get('hold', 'sleep')}/{runs[a].get('hold', 'sleep')}) {mode}: n={len(r)} p5 {q[0]:.4f} median {q[1]:.4f} "
                  f"p95 {q[2]:.4f}")
for lab, r in runs.items():
    print(lab, r.get("hold", "sleep"), "cold sample / row median by place in block, job 0:", r["jobs"][0].get("cold_position_ratio"))
