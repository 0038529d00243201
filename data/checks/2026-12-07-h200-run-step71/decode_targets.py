"""Issue 50's targets as the report's decode section judges them (lab.report.sections.decode.targets), hot and cold,
from a run's decode.json alone: written for a run whose profile stage had not finished, when `make report` could not
run yet.

    PYTHONPATH=. python data/checks/2026-12-06-h100-relanding-step71/decode_targets.py 20261206T161107Z-45f9f6b
"""
import json
import sys

from lab.report.sections.decode import medians, targets

d = json.load(open(f"data/runs/{sys.argv[1]}/decode.json"))
peers = {r["impl"] for r in d["rows"]} - set(d["steps"])
for mode in ("hot", "cold"):
    print(f"## {mode}")
    print("\n".join(targets(d, medians(d["rows"], mode), d["end"], peers)))
print(f"copy: {d['copy']['gbps']:.0f} GB/s ({d['copy']['bytes'] >> 20} MB, median of {d['copy']['samples']} samples);"
      f" seconds: {d['seconds']}")
