"""Call 1's measurement (on a GPU): the cold mode under both of lab.measure.timing.L2Flusher's kinds, side by side.

1. flush_probe for each kind: half the L2 overwritten, then read back from the L2 and after the flush.
2. The write-back itself: a read of four L2s (a stream from HBM, as a memory-bound call) timed after each flush,
   median of 25 samples each, and after no flush (hot: the previous read's clean lines).
3. Decode shapes (argv: specs joined by ';'): the decode branch's end and SDPA's cuDNN backend, each hot, cold
   after the read flush and cold after the write flush, in one randomized round robin (lab.measure.timing.interleave,
   the study's stopping rule at a 0.5 % CI, 3 s a row at most); medians (µs) and cold minus hot.

    python flushes.py "8,32,8,128,8192;64,64,8,128,1024;32,28,4,128,4096,mixed;64,71,1,64,1024"
"""
import contextlib
import json
import statistics
import sys

import torch

from lab import variants
from lab.kernels import manifest
from lab.kernels.decode import DecodeShape
from lab.measure import timing
from lab.measure.decode_peers import DecodeSdpaPeer
from lab.studies.measure_decode import _kernel_launch, decode_input_sets
from lab.studies.shapes import decode_shapes_from

out = {"probe": {kind: timing.flush_probe(timing.L2Flusher(kind)) for kind in timing.FLUSH_KINDS}}
print(json.dumps(out["probe"], indent=1))

stream = torch.zeros(4 * timing.l2_bytes() // 16 * 16, dtype=torch.uint8, device="cuda").view(torch.int32)
flushers = {kind: timing.L2Flusher(kind) for kind in timing.FLUSH_KINDS}
read = {}
for after in ("none", *timing.FLUSH_KINDS):
    before = (lambda: None) if after == "none" else flushers[after]
    timing.timed_blocks(3, stream.amax, before=before)
    read[after] = statistics.median(timing.timed_blocks(25, stream.amax, before=before))
out["stream_read_us"] = read
print(f"a read of {stream.numel() * 4 / 1e6:.0f} MB: " + ", ".join(f"after {k} {v:.1f} us" for k, v in read.items()))

end = manifest.names(problem=manifest.DECODE)[-1]
fn = variants.load(end)
peer = DecodeSdpaPeer("cudnn")
rule = timing.StopRule(rel_ci=0.005, cap_s=3.0, min_samples=30, turn_us=1000.0, hot_turn_us=4000.0)
out["decode"] = {}
for shape in decode_shapes_from(sys.argv[1] if len(sys.argv) > 1 else "8,32,8,128,8192"):
    assert isinstance(shape, DecodeShape)
    n_sets = decode_input_sets(shape, timing.l2_bytes())
    sets = [shape.random_inputs(device="cuda") for _ in range(n_sets)]
    call = ("q", "k_cache", "v_cache", "cache_lens", "block_table")
    launches = {end: [_kernel_launch(fn, x, "cuda") for x in sets]}
    if not peer.unsupported_reason(*(sets[0][k] for k in call)):
        launches[peer.name] = [peer.bind(*(x[k] for k in call)) for x in sets]
    timers, contexts = {}, {}
    for name, ls in launches.items():
        ctx = peer.context if name == peer.name else None
        with (ctx() if ctx else contextlib.nullcontext()):
            timers[f"{name}/hot"] = timing.HotTimer(ls)
            for kind in timing.FLUSH_KINDS:
                timers[f"{name}/cold-{kind}"] = timing.ColdTimer(ls, flusher=flushers[kind])
        if ctx:
            contexts.update({t: ctx for t in timers if t.startswith(name + "/")})
    state = timing.interleave(timers, rule, seed=1, context_of=lambda t: contexts[t]() if t in contexts
                              else contextlib.nullcontext())
    med = {t: statistics.median(st["samples"]) for t, st in state.items() if st["samples"]}
    out["decode"][shape.spec] = {"median_us": med, "n": {t: len(st["samples"]) for t, st in state.items()},
                                 "bytes": shape.bytes_moved()}
    for name in launches:
        hot = med[f"{name}/hot"]
        print(f"{shape.spec:32s} {name:24s} hot {hot:8.1f}  " + "  ".join(
            f"cold-{k} {med[f'{name}/cold-{k}']:8.1f} (+{med[f'{name}/cold-{k}'] - hot:5.1f})"
            for k in timing.FLUSH_KINDS))
json.dump(out, open(sys.argv[2] if len(sys.argv) > 2 else "/dev/stdout", "w"), indent=1)
