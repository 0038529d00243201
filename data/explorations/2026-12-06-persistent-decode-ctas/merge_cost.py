"""Call 3 (issue 50): step 70 and step 72 with and without their merge and write (diag_merge.py's switches, applied on
the device copy first), timed the way a run times its decode set (measure_decode_shape: one randomized interleave
until the run's decode stopping rule), hot, no peers. Printed per shape: each build's median and the report's paired
interval of step 72 against step 70, with and without the merge.

    python merge_cost.py OUT shape shape ...
"""
import json
import sys

from lab import variants
from lab.kernels.build import build_all
from lab.kernels.decode import DecodeShape
from lab.report.sections.decode import medians, shape_of, speed_interval
from lab.studies.decode_study import decode_rule, gpu_clocks
from lab.studies.measure_decode import measure_decode_shape
from lab.studies.params import RunParams

BUILDS = {"70": ("l2_promotion_by_gpu", {}), "72": ("persistent_decode_ctas", {}),
          "70_no_merge": ("l2_promotion_by_gpu", {"FA_DIAG_SKIP_EPILOGUE": 1}),
          "72_no_merge": ("persistent_decode_ctas", {"FA_DIAG_SKIP_MERGE": 1})}

out, shapes = sys.argv[1], [DecodeShape.parse(s) for s in sys.argv[2:]]
build_all(["l2_promotion_by_gpu", "persistent_decode_ctas"],
          configs={f"{step}_{label}": (step, d) for label, (step, d) in BUILDS.items() if d})
kernels = {label: variants.load(step, defines=d, impl=f"{step}_{label}") if d else variants.load(step)
           for label, (step, d) in BUILDS.items()}
rule, clocks = decode_rule(RunParams().resolved()), gpu_clocks()
record = {"builds": {k: [s, d] for k, (s, d) in BUILDS.items()}, "rows": [], "notes": []}
for i, shape in enumerate(shapes):
    _, rows, notes = measure_decode_shape(shape, kernels, [], ["hot"], rule, clocks, "merge_cost", seed=31 + i)
    record["rows"] += rows
    record["notes"].append(notes)
    json.dump(record, open(f"{out}/merge_cost.json", "w"), indent=1)
for key, impls in medians(record["rows"], "hot").items():
    with_merge, without = (speed_interval(impls[f"72{x}"], impls[f"70{x}"]) for x in ("", "_no_merge"))
    print(f"hot {shape_of(key).spec}: " + ", ".join(f"{k} {v['median_us']:.2f} us" for k, v in impls.items())
          + f" | 72/70 {with_merge[0]:.4f}x [{with_merge[1]:.4f}, {with_merge[2]:.4f}]"
          + f" | without the merge {without[0]:.4f}x [{without[1]:.4f}, {without[2]:.4f}]", flush=True)
