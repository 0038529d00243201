"""Step 34 against cuDNN at each shape of the given runs: ratio of medians [95 % interval over the
replicates], per replicate medians, and the SM clock range, one line per (run, shape, mode)."""
import sys

import numpy as np

from lab.measure import records
from lab.report.load import RunData

for run_id in sys.argv[1:]:
    data = RunData(records.RunRecord.open(run_id))
    blocks = data.run_params.min_blocks
    for shape in data.measured_shapes:
        for mode in ("hot", "cold"):
            sp = data.speedup("warp_release_d64", "sdpa_cudnn", shape, mode)
            if sp is None:
                continue
            med = {impl: [round(float(np.median(v)), 1) for v in (data.reps(impl, shape, mode) or {}).values()]
                   for impl in ("warp_release_d64", "sdpa_cudnn")}
            print(f"MIN_BLOCKS={blocks} {shape} {mode}: {sp.ratio:.3f}x [{sp.lo:.3f}, {sp.hi:.3f}]  "
                  f"medians ours {med['warp_release_d64']} cuDNN {med['sdpa_cudnn']}")
