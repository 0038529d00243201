"""Step 35 (longest_first_queue) in bf16 against the same problem in fp16, and over cuDNN, at every
`models` shape, from a run folder (default: the one beside this file; lab.report.models.speedup_rows:
bf16 against fp16 by the ratio of medians, the two being separate round robins; over cuDNN round by
round).
    PYTHONPATH=. python data/checks/2026-11-26-h100-bf16-vs-fp16/bf16_vs_fp16.py [RUN_DIR]"""
import sys
from pathlib import Path

from lab.measure.records import RunRecord
from lab.report import models
from lab.report.load import RunData

run_dir = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else \
    Path(__file__).resolve().parent / "20261126T070216Z-c627c47"
data = RunData(RunRecord.open(run_dir.name, run_dir.parent))
shapes = [s for s in data.measured_shapes if s.torch_dtype_name == "bfloat16"]
print(f"{data.run_id} ({data.env.get('gpu')}, {data.replicates} replicates)")
for mode in ("hot", "cold"):
    rows = models.speedup_rows(data, shapes, mode)
    for r in rows:
        g, c = r["vs_fp16"], r["vs_peer"]
        print(f"{mode:4} {models.label(r['shape']):24} {r['shape'].tuple_label:40} bf16 / fp16 speed "
              f"{g.ratio:.3f}x [{g.lo:.3f}, {g.hi:.3f}]   over {r['fastest']} {c.ratio:.3f}x [{c.lo:.3f}, {c.hi:.3f}]")
    for v in models.verdicts(rows):
        print(f"{mode:4} {v}")
