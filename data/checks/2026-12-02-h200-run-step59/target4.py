"""Issue 46's target 4 in a recorded run: the sm_90a end over step 35 (longest_first_queue) at the canonical S = 512
rows, hot (paired speedups with 95 % intervals, lab.report.load.RunData.speedup). > 1: the end faster; "missed" where
the point is more than 2 % slower.

    PYTHONPATH=. python data/checks/2026-12-02-h200-run-step59/target4.py 20261202T155630Z-7d83b72 queue_overlap_d64
"""
import sys

from lab.kernels.shape import Shape
from lab.measure import records
from lab.report.load import RunData

SHAPES = ["1,8,512,64", "4,16,512,64", "8,16,512,64", "32,8,512,64", "1,8,512,64,causal", "4,16,512,64,causal",
          "8,16,512,64,causal"]

if __name__ == "__main__":
    data = RunData(records.RunRecord.open(sys.argv[1]))
    end = sys.argv[2]
    print(f"{end} over longest_first_queue, hot, run {sys.argv[1]} (> 1: {end} faster)")
    for spec in SHAPES:
        ci = data.speedup(end, "longest_first_queue", Shape.parse(spec), "hot")
        print(f"{spec:22s} {ci.ratio:.3f}x [{ci.lo:.3f}, {ci.hi:.3f}]  {'missed' if ci.ratio < 0.98 else 'ok'}")
