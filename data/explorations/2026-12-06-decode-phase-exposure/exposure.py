"""Issue 50, target 2 on the H100: how much of the decode end's time at the shapes it misses is its epilogue (the
warps' merge through shared memory and the write of O) and how much its math, against the data movement alone?
The end (l2_promotion_by_gpu) is timed as it is and with diag_patch.py's switches (applied on the device copy
first), beside SDPA's backends, hot (HotTimer: CUDA graphs of back-to-back launches over input sets that do not fit
the L2 together) and, where EXPOSURE_MODES names it, cold; all interleaved in rounds so that they share the GPU's
state. The switched builds compute wrong outputs by design and are not checked; the end is (the fp32 grid).

    python exposure.py OUT shape shape ...
"""
import json
import os
import statistics
import sys

import torch

from lab import variants
from lab.kernels.build import build_all
from lab.kernels.decode import DecodeShape
from lab.measure.decode_check import check_decode_case, decode_grid
from lab.measure.decode_peers import DecodeSdpaPeer
from lab.measure.timing import ColdTimer, HotTimer, l2_bytes
from lab.studies.measure_decode import decode_input_sets

END = "l2_promotion_by_gpu"
SWITCHED = {"end": {}, "no_epilogue": {"FA_DIAG_SKIP_EPILOGUE": 1}, "no_math": {"FA_DIAG_SKIP_MATH": 1},
            "movement_only": {"FA_DIAG_SKIP_MATH": 1, "FA_DIAG_SKIP_EPILOGUE": 1}}
ROUNDS, PER_ROUND = 5, 3

out, shapes = sys.argv[1], [DecodeShape.parse(s) for s in sys.argv[2:]]
build_all([], configs={f"{END}_{label}": (END, d) for label, d in SWITCHED.items() if d})
fns = {label: variants.load(END, defines=d, impl=f"{END}_{label}") if d else variants.load(END)
       for label, d in SWITCHED.items()}
end_call = lambda q, k, v, lens, table, o: fns["end"](q, k, v, lens, table, out=o)  # noqa: E731
grid = [check_decode_case("end", end_call, s, i) for i, s in enumerate(decode_grid())]
record = {"gpu": torch.cuda.get_device_name(), "switched": SWITCHED, "rows": [],
          "end_check": {"cases": len(grid), "passed": sum(bool(r.get("passed")) for r in grid)}}
print(f"end's check: {record['end_check']}", flush=True)


def bind(shape):
    """Per implementation: (its launches over the input sets, the context it is timed in)."""
    sets = [shape.random_inputs(seed=11 + i) for i in range(decode_input_sets(shape, l2_bytes()))]
    bound = {}
    for label, fn in fns.items():
        ls = []
        for x in sets:
            a = (x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"])
            need = fn.workspace_bytes(a[0], a[1], a[4])
            ws = torch.empty(need, dtype=torch.uint8, device="cuda") if need else None
            ls.append(lambda a=a, o=x["out"], ws=ws, fn=fn: fn.launch(*a, o, workspace=ws))
        bound[label] = (ls, torch.no_grad)
    for peer in (DecodeSdpaPeer(b) for b in ("cudnn", "flash", "default")):
        a0 = (sets[0]["q"], sets[0]["k_cache"], sets[0]["v_cache"], sets[0]["cache_lens"], sets[0]["block_table"])
        if not peer.unsupported_reason(*a0):
            with peer.context():
                ls = [peer.bind(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"]) for x in sets]
            bound[peer.name] = (ls, peer.context)
    return bound


for shape in shapes:
    bound = bind(shape)
    for mode in os.environ.get("EXPOSURE_MODES", "hot").split(","):
        timer_of = HotTimer if mode == "hot" else ColdTimer
        timers = {}
        for name, (ls, ctx) in bound.items():
            with ctx():
                timers[name] = timer_of(ls)
        samples = {name: [] for name in timers}
        for _ in range(ROUNDS):
            for name, t in timers.items():
                with bound[name][1]():
                    samples[name] += t.samples(PER_ROUND)
        med = {name: statistics.median(s) for name, s in samples.items()}
        best = min((n for n in med if n.startswith("sdpa")), key=med.get, default=None)
        record["rows"].append({"shape": shape.spec, "mode": mode, "median_us": med, "samples": samples,
                               "best_peer": best})
        row = " ".join(f"{label} {med[label]:.2f}" for label in SWITCHED)
        print(f"{shape.spec:<30} {mode:<4} {row} | {best} {med[best]:.2f}" if best else f"{shape.spec} {mode} {row}",
              flush=True)
        del timers
    del bound
    torch.cuda.empty_cache()
json.dump(record, open(f"{out}/exposure.json", "w"), indent=1)
