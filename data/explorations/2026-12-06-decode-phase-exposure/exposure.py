"""Issue 50, target 2 on the H100: how much of the decode end's time at the shapes it misses is its epilogue (the
warps' merge through shared memory and the write of O) and how much its math, against the data movement alone?
The end (l2_promotion_by_gpu) as it is and with diag_patch.py's switches (applied on the device copy first) are
timed beside SDPA's backends the way a run times its decode set (lab.studies.measure_decode.measure_decode_shape:
one randomized interleave a mode until the run's decode stopping rule), hot and, where EXPOSURE_MODES names it,
cold; each build is then given against the fastest peer and against the end, with the report's interval
(lab.report.sections.decode.speed_interval). The switched builds compute wrong outputs by design and are not
checked; the end is (the fp32 decode grid).
EXPOSURE_END names another end and EXPOSURE_BUILDS other switched builds (../2026-12-07-decode-mixed-phases-h200).

    [EXPOSURE_END=step] [EXPOSURE_BUILDS=b,b] [EXPOSURE_MODES=hot,cold] python exposure.py OUT shape shape ...
"""
import json
import os
import sys

from lab import variants
from lab.kernels.build import build_all
from lab.kernels.decode import DecodeShape
from lab.measure.decode_check import check_decode_case, decode_grid
from lab.measure.decode_peers import DecodeSdpaPeer
from lab.report.sections.decode import fastest_peer, medians, shape_of, speed_interval
from lab.studies.decode_study import decode_rule, gpu_clocks
from lab.studies.measure_decode import measure_decode_shape
from lab.studies.params import RunParams

END = os.environ.get("EXPOSURE_END", "l2_promotion_by_gpu")
BUILDS = {"end": {}, "no_epilogue": {"FA_DIAG_SKIP_EPILOGUE": 1}, "no_math": {"FA_DIAG_SKIP_MATH": 1},
          "movement_only": {"FA_DIAG_SKIP_MATH": 1, "FA_DIAG_SKIP_EPILOGUE": 1},
          "no_merge": {"FA_DIAG_SKIP_MERGE": 1},
          "movement_no_merge": {"FA_DIAG_SKIP_MATH": 1, "FA_DIAG_SKIP_EPILOGUE": 1, "FA_DIAG_SKIP_MERGE": 1}}
# The builds timed (EXPOSURE_BUILDS, comma-separated; "end" always): this folder's call 1 timed the first four.
SWITCHED = {k: BUILDS[k] for k in ["end"] + [b for b in os.environ.get(
    "EXPOSURE_BUILDS", "no_epilogue,no_math,movement_only").split(",") if b and b != "end"]}

out, shapes = sys.argv[1], [DecodeShape.parse(s) for s in sys.argv[2:]]
build_all([], configs={f"{END}_{label}": (END, d) for label, d in SWITCHED.items() if d})
kernels = {label: variants.load(END, defines=d, impl=f"{END}_{label}") if d else variants.load(END)
           for label, d in SWITCHED.items()}
end_call = lambda q, k, v, lens, table, o: kernels["end"](q, k, v, lens, table, out=o)  # noqa: E731
grid = [check_decode_case("end", end_call, s, i) for i, s in enumerate(decode_grid())]
record = {"switched": SWITCHED, "rows": [], "notes": [],
          "end_check": {"cases": len(grid), "passed": sum(bool(r.get("passed")) for r in grid)}}
print(f"end's check: {record['end_check']}", flush=True)

modes = os.environ.get("EXPOSURE_MODES", "hot").split(",")
peers = [DecodeSdpaPeer(b) for b in ("cudnn", "flash", "default")]
rule, clocks = decode_rule(RunParams().resolved()), gpu_clocks()
for i, shape in enumerate(shapes):
    _, rows, notes = measure_decode_shape(shape, kernels, peers, modes, rule, clocks, "exposure", seed=7 + i)
    record["rows"] += rows
    record["notes"].append(notes)
json.dump(record, open(f"{out}/exposure.json", "w"), indent=1)

for mode in modes:
    for key, impls in medians(record["rows"], mode).items():
        best = fastest_peer(impls, [p.name for p in peers])
        cells = []
        for label in SWITCHED:
            if label in impls:
                vs_end = speed_interval(impls[label], impls["end"]) if "end" in impls else (float("nan"),) * 3
                vs_peer = speed_interval(impls[label], best) if best else (float("nan"),) * 3
                cells.append(f"{label} {impls[label]['median_us']:.2f} us {vs_end[0]:.4f}x end {vs_peer[0]:.4f}x "
                             f"[{vs_peer[1]:.4f}, {vs_peer[2]:.4f}] peer")
        peer = f"{best['impl']} {best['median_us']:.2f} us" if best else "no peer"
        print(f"{mode} {shape_of(key).spec}: " + "; ".join(cells) + f" | {peer}", flush=True)
