"""Step 35's bf16 speed over fp16 at each models shape and mode, pooled over the timing-only runs of a
check folder (default: this one; the H200 half passes its own), 6 replicates in two runs: the mean of
the replicates' medians in each dtype, fp16 / bf16 (> 1: bf16 faster), beside each run's own ratio. Each run's two dtypes are separate round robins, so a run's ratio
carries the GPU's state at two moments; pooling the two runs halves that part.
    PYTHONPATH=. python data/checks/2026-11-26-h100-bf16-vs-fp16-short-sleep/pooled.py [CHECK_DIR]"""
import sys
from pathlib import Path

import pandas as pd

HERE = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parent
runs = sorted(p for p in HERE.iterdir() if p.is_dir() and p.name.startswith("2026"))
meds = []
for run in runs:
    s = pd.read_parquet(run / "samples.parquet")
    s = s[(s.impl == "longest_first_queue") & ~s.throttled]
    m = s.groupby(["mode", "B", "H", "S", "D", "H_kv", "dtype", "replicate"]).latency_us.median().reset_index()
    meds.append(m.assign(run=run.name))
m = pd.concat(meds)
per_run = m.groupby(["mode", "B", "H", "S", "D", "H_kv", "run", "dtype"]).latency_us.mean().unstack("dtype")
per_run = (per_run.float16 / per_run.bfloat16).unstack("run")
pooled = m.groupby(["mode", "B", "H", "S", "D", "H_kv", "dtype"]).latency_us.mean().unstack("dtype")
per_run["pooled"] = pooled.float16 / pooled.bfloat16
print("bf16 speed over fp16 (fp16 / bf16 of the mean replicate median), step 35:")
print(per_run.round(3).to_string())
for mode in ("hot", "cold"):
    p = per_run.loc[mode, "pooled"]
    print(f"{mode}: pooled lowest {p.min():.3f}x at (B, H, S, D, H_kv) = {tuple(int(x) for x in p.idxmin())}; "
          f"rows below 0.98: {(p < 0.98).sum()} of {len(p)}")
