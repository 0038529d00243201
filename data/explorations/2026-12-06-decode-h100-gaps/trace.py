"""Call 4 (issue 50, target 2): where the end's 1 % hot gap to cuDNN at the batch-64 calls of 1,024 tokens lies.
Each implementation's hot loop (lab.measure.timing.HotTimer: a CUDA graph of back-to-back launches over input sets
that do not fit the L2 together, as the run times it) is replayed under torch.profiler (CUPTI's kernel records);
per implementation: the timer's per-call median, and its kernels' median duration and median gap from one call's
last kernel end to the next call's first kernel start. If the end's kernels are as fast as cuDNN's and its gaps
longer, the gap lies between launches; if its kernels are slower, inside them.

    [TRACE_STEPS=step,step] PYTHONPATH=. python trace.py OUT shape shape ...   (steps: the end by default)
"""
import json
import os
import statistics
import sys

import torch

from lab import variants
from lab.kernels.decode import DecodeShape
from lab.measure.decode_peers import DecodeSdpaPeer
from lab.measure.timing import HotTimer, l2_bytes
from lab.studies.measure_decode import decode_input_sets

out, specs = sys.argv[1], sys.argv[2:]
END = "l2_promotion_by_gpu"
STEPS = os.environ.get("TRACE_STEPS", END).split(",")
fns = {name: variants.load(name) for name in STEPS}
rows = []
for spec in specs:
    shape = DecodeShape.parse(spec)
    sets = [shape.random_inputs(seed=7 + i) for i in range(decode_input_sets(shape, l2_bytes()))]
    args = [(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"]) for x in sets]
    launches, contexts = {name: [] for name in fns}, {}
    for name, fn in fns.items():
        for a, x in zip(args, sets):
            need = fn.workspace_bytes(a[0], a[1], a[4])
            ws = torch.empty(need, dtype=torch.uint8, device="cuda") if need else None
            launches[name].append(lambda a=a, x=x, ws=ws, fn=fn: fn.launch(*a, x["out"], workspace=ws))
    for peer in (DecodeSdpaPeer("cudnn"), DecodeSdpaPeer("default")):
        if not peer.unsupported_reason(*args[0]):
            with peer.context():
                launches[peer.name] = [peer.bind(*a) for a in args]
            contexts[peer.name] = peer.context
    for name, ls in launches.items():
        with (contexts[name]() if name in contexts else torch.no_grad()):
            timer = HotTimer(ls)
            per_call = statistics.median(timer.samples(9))
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                timer.samples(3)
                torch.cuda.synchronize()
        prof.export_chrome_trace(f"/tmp/trace_{name}.json")
        ev = [e for e in json.load(open(f"/tmp/trace_{name}.json"))["traceEvents"] if e.get("cat") == "kernel"]
        ev = sorted((e for e in ev if "spin" not in e["name"]), key=lambda e: e["ts"])
        names = sorted({e["name"][:70] for e in ev})
        per = max(1, round(len(ev) / (3 * timer.reps)))  # kernels a call
        calls = [ev[i:i + per] for i in range(0, len(ev) - per + 1, per)]
        durs = [sum(k["dur"] for k in c) for c in calls]
        gaps = [b[0]["ts"] - (a[-1]["ts"] + a[-1]["dur"]) for a, b in zip(calls, calls[1:])]
        gaps = [g for g in gaps if g < 50]  # a sample's boundary (the host's read-back) is not a launch gap
        row = {"shape": spec, "impl": name, "per_call_us": per_call, "kernels_a_call": per, "calls": len(calls),
               "kernel_us": statistics.median(durs), "gap_us": statistics.median(gaps) if gaps else None,
               "kernels": names, "reps": timer.reps}
        rows.append(row)
        print(f"{spec:26} {name:22} per call {per_call:7.2f}  kernel {row['kernel_us']:7.2f}  gap "
              f"{row['gap_us'] if row['gap_us'] is None else round(row['gap_us'], 2)}  ({per} a call, {len(calls)} calls)",
              flush=True)
        del timer
json.dump(rows, open(f"{out}/{os.environ.get('TRACE_NAME', 'trace')}.json", "w"), indent=1)
