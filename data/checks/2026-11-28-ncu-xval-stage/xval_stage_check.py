"""Device check: the profile stage's ncu cross-check (lab.studies.stages.ncu_crosscheck) on a recorded run,
then the report's table from it."""
import json, os, shutil, sys, time
from lab.measure.records import RunRecord
from lab.studies import stages
from lab.report.load import RunData
from lab.report.tables import ncu_xval_table

run_id, out = sys.argv[1], sys.argv[2]
rec = RunRecord.open(run_id)
t0 = time.perf_counter()
x = stages.ncu_crosscheck(rec, ["flash_attn3", "sdpa_cudnn"])
print(f"crosscheck {time.perf_counter() - t0:.1f} s, errors {x['errors']}")
rec.write_json("ncu_xval.json", x)
shutil.copy(rec.path("ncu_xval.json"), out)
rows, ratios = ncu_xval_table(RunData(rec))
for r in rows:
    print(" | ".join(map(str, r)))
print(f"{len(ratios)} shapes, within 2 %: {sum(abs(r - 1) <= 0.02 for r in ratios)}, {min(ratios):.3f} to {max(ratios):.3f}")
