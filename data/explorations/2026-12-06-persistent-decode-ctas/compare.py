"""Issue 50: step 72 (persistent_decode_ctas) against its parent, step 70 (l2_promotion_by_gpu), and the run's decode
peers at every shape of the decode set, timed the way a run times its decode set
(lab.studies.measure_decode.measure_decode_shape: one randomized interleave a mode until the run's decode stopping
rule), hot and cold. Printed per shape and mode: each step's median, the step against its parent and the end against
the fastest peer, with the report's paired interval (lab.report.sections.decode.speed_interval).

    python compare.py OUT
"""
import json
import sys

from lab import variants
from lab.report.sections.decode import medians, shape_of, speed_interval
from lab.studies.decode_study import decode_rule, gpu_clocks, gpu_peers
from lab.studies.measure_decode import measure_decode_shape
from lab.studies.params import RunParams
from lab.studies.shapes import decode_shapes

STEP, PARENT = "persistent_decode_ctas", "l2_promotion_by_gpu"
MODES = ("hot", "cold")

out = sys.argv[1]
kernels = {name: variants.load(name) for name in (PARENT, STEP)}
params = RunParams().resolved()
peers, rule, clocks = gpu_peers(params), decode_rule(params), gpu_clocks()
record = {"step": STEP, "parent": PARENT, "rows": [], "notes": []}
for i, shape in enumerate(decode_shapes()):
    _, rows, notes = measure_decode_shape(shape, kernels, peers, MODES, rule, clocks, "persistent", seed=11 + i)
    record["rows"] += rows
    record["notes"].append(notes)
    json.dump(record, open(f"{out}/compare.json", "w"), indent=1)  # after every shape: nothing measured is lost

for mode in MODES:
    for key, impls in medians(record["rows"], mode).items():
        timed = [impls[p.name] for p in peers if p.name in impls]
        best = min(timed, key=lambda r: r["median_us"]) if timed else None
        line = f"{mode} {shape_of(key).spec}:"
        if STEP in impls and PARENT in impls:
            s, lo, hi = speed_interval(impls[STEP], impls[PARENT])
            line += f" step {impls[STEP]['median_us']:.2f} us, parent {impls[PARENT]['median_us']:.2f} us, " \
                    f"{s:.4f}x [{lo:.4f}, {hi:.4f}] parent"
        for name in (PARENT, STEP):
            if best and name in impls:
                s, lo, hi = speed_interval(impls[name], best)
                line += f"; {'step' if name == STEP else 'parent'} {s:.4f}x [{lo:.4f}, {hi:.4f}]"
        line += f" | {best['impl']} {best['median_us']:.2f} us" if best else " | no peer"
        print(line, flush=True)
