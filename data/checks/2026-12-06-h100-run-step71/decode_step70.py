"""Step 70 (l2_promotion_by_gpu) over its parent, step 57 (tensor_maps_prefetched), at every decode shape and mode of
a run, and each against the fastest peer there: medians from decode.json's rows, the interval the report's decode
section gives (lab.report.sections.decode.speed_interval: one median's CI end over the other's). > 1: the first faster.

    PYTHONPATH=. python data/checks/2026-12-06-h100-run-step71/decode_step70.py 20261206T081702Z-d154863
"""
import json
import sys

from lab.report.sections.decode import medians, shape_of, speed_interval

STEP, PARENT = "l2_promotion_by_gpu", "tensor_maps_prefetched"

d = json.load(open(f"data/runs/{sys.argv[1]}/decode.json"))
peers = {r["impl"] for r in d["rows"]} - set(d["steps"])
print(f"{STEP} over {PARENT}, and each over the fastest peer, run {sys.argv[1]}")
print(f"{'shape':34} {'mode':4}  {'step 70 / 57':24} {'57 / peer':8} {'70 / peer':8} peer")
for mode in ("hot", "cold"):
    for key, impls in medians(d["rows"], mode).items():
        if STEP not in impls or PARENT not in impls:
            continue
        s, lo, hi = speed_interval(impls[STEP], impls[PARENT])
        timed = [impls[p] for p in sorted(peers) if p in impls]
        best = min(timed, key=lambda r: r["median_us"]) if timed else None
        vs = (f"{speed_interval(impls[PARENT], best)[0]:8.4f} {speed_interval(impls[STEP], best)[0]:8.4f} "
              f"{best['impl']}" if best else "       —        — none takes it")
        print(f"{shape_of(key).spec:34} {mode:4}  {s:.4f} [{lo:.3f}, {hi:.3f}]  {vs}")
