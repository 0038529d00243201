"""Step 35 (longest_first_queue) against step 34 (warp_release_d64) and cuDNN at every shape of the
given runs: ratio of medians [95 % interval over the replicates], > 1: step 35 faster."""
import sys

from lab.measure import records
from lab.report.load import RunData

NEW, OLD, PEER = "longest_first_queue", "warp_release_d64", "sdpa_cudnn"
for run_id in sys.argv[1:]:
    data = RunData(records.RunRecord.open(run_id))
    print(f"{run_id}: {NEW} over {OLD} | {NEW} over {PEER} | {OLD} over {PEER}")
    for shape in data.measured_shapes:
        for mode in ("hot", "cold"):
            cells = []
            for a, b in ((NEW, OLD), (NEW, PEER), (OLD, PEER)):
                sp = data.speedup(a, b, shape, mode)
                cells.append("-" if sp is None else f"{sp.ratio:.3f}x [{sp.lo:.3f}, {sp.hi:.3f}]")
            if cells[0] != "-":
                print(f"{str(shape):44s} {mode}: " + " | ".join(cells))
