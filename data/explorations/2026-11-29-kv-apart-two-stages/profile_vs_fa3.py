"""Step 50 beside FlashAttention-3 and cuDNN in the committed run's own profile (no GPU): Nsight Compute's metrics
per implementation at the profiled shapes (data/runs/<run>/profile.csv, written by the run's profile stage).

    python profile_vs_fa3.py data/runs/20261129T063517Z-d2c870d > profile_vs_fa3.txt
"""
import sys

import pandas as pd

COLUMNS = ["duration_us", "tensor_pipe_active", "shared_wavefronts", "local_bytes", "stall_wait", "stall_long_scoreboard",
           "stall_short_scoreboard", "stall_barrier", "stall_dispatch_stall", "stall_not_selected", "stall_mio_throttle",
           "stall_sleeping", "stall_branch_resolving"]
IMPLS = ["pipeline_state_d128", "flash_attn3", "sdpa_cudnn"]

profile = pd.read_csv(f"{sys.argv[1]}/profile.csv")
for (S, D, causal), rows in profile[profile.S == 4096].groupby(["S", "D", "causal"]):
    rows = rows.set_index("impl")
    print(f"(4, 16, {S}, {D}) {'causal' if causal else 'non-causal'}: " + " | ".join(IMPLS))
    for c in COLUMNS:
        print(f"  {c:24s}" + "".join(f"{rows.loc[i, c]:>14.4g}" if i in rows.index else f"{'-':>14s}" for i in IMPLS))
