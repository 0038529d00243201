"""FA3's hot medians in a recorded run against Nsight Compute (issue 45's target): at every shape the run
timed flash_attn3 hot with a median of 100 us or more, three ncu processes of one launch each
(lab.measure.profile.profile_impl, --clock-control none), their median gpu__time_duration beside the
run's hot median (over its replicates, as the report computes it), and the ratio; within 2 % is the
target. cuDNN the same way, as the control. To run on the GPU the run was recorded on, after the run:

    PYTHONPATH=. python data/explorations/2026-11-27-fa3-peer/ncu_xval_run.py RUN_ID OUT_DIR [IMPL ...]
"""
import json
import statistics
import sys
import tempfile
from pathlib import Path

from lab.measure import profile, records
from lab.report.load import RunData

run_id, out_dir = sys.argv[1], Path(sys.argv[2])
impls = sys.argv[3:] or ["flash_attn3", "sdpa_cudnn"]
data = RunData(records.RunRecord.open(run_id))
rows = []
for shape in data.measured_shapes:
    for impl in impls:
        hot = data.median(impl, shape, "hot")
        if hot is None or hot < 100.0:
            continue
        durations = []
        for _ in range(3):
            with tempfile.TemporaryDirectory() as tmp:
                res = profile.profile_impl(impl, shape, shape.causal, Path(tmp))
            durations.append(res.main.get("duration") if res.ok and res.main else None)
        good = [d for d in durations if d is not None]
        ncu = statistics.median(good) if good else None
        row = {"shape": shape.id, "impl": impl, "hot_median_us": hot, "ncu_us": durations, "ncu_median_us": ncu,
               "ratio": hot / ncu if ncu else None}
        rows.append(row)
        print(f"{shape.id:40} {impl:14} hot {hot:9.1f} us  ncu {ncu or float('nan'):9.1f} us  "
              f"ratio {row['ratio'] or float('nan'):.3f}", flush=True)
(out_dir / f"ncu_xval_{run_id}.json").write_text(json.dumps(rows, indent=1))
for impl in impls:
    r = [x["ratio"] for x in rows if x["impl"] == impl and x["ratio"] is not None]
    if r:
        print(f"{impl}: {len(r)} shapes, hot / ncu {min(r):.3f} to {max(r):.3f}; within 2 %: "
              f"{sum(abs(x - 1) <= 0.02 for x in r)} of {len(r)}")
