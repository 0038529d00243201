"""sdpa_default's median over sdpa_cudnn's at every decode shape both timed, per mode: the range, for the run's
decode.json and for call 4 of the persistent decode exploration (why the report counts the dispatcher only where no
SDPA backend was timed beside it, lab.measure.peers.contenders).

    PYTHONPATH=. python data/checks/2026-12-06-h100-relanding-step71/dispatcher_vs_cudnn.py > dispatcher_vs_cudnn.txt
"""
import json
from collections import defaultdict

from lab.report.sections.decode import shape_key

SOURCES = {"run 20261206T161107Z-45f9f6b": "data/runs/20261206T161107Z-45f9f6b/decode.json",
           "call 4": "data/explorations/2026-12-06-persistent-decode-ctas/call4/compare.json"}
for label, path in SOURCES.items():
    medians = defaultdict(dict)
    for r in json.load(open(path))["rows"]:
        medians[(shape_key(r), r["mode"])][r["impl"]] = r["median_us"]
    by_mode = defaultdict(list)
    for (_, mode), m in medians.items():
        if "sdpa_default" in m and "sdpa_cudnn" in m:
            by_mode[mode].append(m["sdpa_default"] / m["sdpa_cudnn"])
    for mode, xs in by_mode.items():
        print(f"{label}, {mode}: sdpa_default / sdpa_cudnn {min(xs):.4f}-{max(xs):.4f} at {len(xs)} shapes")
