"""The decode end (step 70) against the fastest peer at every shape and mode of a decode.json (call 3's stages), with
the interval the report's decode section gives (lab.report.sections.decode.speed_interval). > 1: the end faster.

    PYTHONPATH=. python data/explorations/2026-12-06-decode-h100-gaps/end_vs_peers.py call3/decode_2.json.gz
"""
import gzip
import json
import sys

from lab.report.sections.decode import medians, shape_of, speed_interval

END = "l2_promotion_by_gpu"
d = json.load(gzip.open(sys.argv[1], "rt"))
peers = {r["impl"] for r in d["rows"]} - set(d["steps"])
print(f"{'shape':34} {'mode':4}  {'end / fastest peer':26} peer")
for mode in ("hot", "cold"):
    for key, impls in medians(d["rows"], mode).items():
        timed = [impls[p] for p in sorted(peers) if p in impls]
        if END not in impls or not timed:
            continue
        best = min(timed, key=lambda r: r["median_us"])
        s, lo, hi = speed_interval(impls[END], best)
        miss = "" if s >= 1.0 and lo > 0.99 else "  <- misses target 2"
        print(f"{shape_of(key).spec:34} {mode:4}  {s:.4f} [{lo:.4f}, {hi:.4f}]  {best['impl']}{miss}")
