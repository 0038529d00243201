"""A decode step over its parent at every decode shape and mode of a run, and each against the fastest peer there
(lab.report.sections.decode.fastest_peer: sdpa_default only where none of SDPA's backends was timed): medians from
decode.json's rows, the interval the report's decode section gives (speed_interval). > 1: the first faster.

    PYTHONPATH=. python data/checks/2026-12-07-h200-run-step71/decode_step.py 20261207T061416Z-36dadea \
        persistent_decode_ctas l2_promotion_by_gpu
"""
import json
import sys

from lab.report.sections.decode import fastest_peer, medians, shape_of, speed_interval

run, step, parent = sys.argv[1:4]
d = json.load(open(f"data/runs/{run}/decode.json"))
peers = {r["impl"] for r in d["rows"]} - set(d["steps"])
print(f"{step} over {parent}, and each over the fastest peer, run {run}")
print(f"{'shape':34} {'mode':4}  {'step / parent':24} {'parent / peer':13} {'step / peer':24} peer")
for mode in ("hot", "cold"):
    for key, impls in medians(d["rows"], mode).items():
        if step not in impls or parent not in impls:
            continue
        s, lo, hi = speed_interval(impls[step], impls[parent])
        best = fastest_peer(impls, peers)
        if best:
            p, plo, phi = speed_interval(impls[step], best)
            vs = f"{speed_interval(impls[parent], best)[0]:13.4f} {p:.4f} [{plo:.3f}, {phi:.3f}]  {best['impl']}"
        else:
            vs = f"{'—':>13} {'—':24} none takes it"
        print(f"{shape_of(key).spec:34} {mode:4}  {s:.4f} [{lo:.3f}, {hi:.3f}]  {vs}")
