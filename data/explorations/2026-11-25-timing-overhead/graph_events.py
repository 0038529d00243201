"""Does a hot sample of cuDNN carry host time? Replaying cuDNN's captured graph blocks the host until
the stream is idle (which_blocks.py: the hold timed out behind it, 267 ms, and only there), so under
the fixed sleep each hot sample's start event fires before the host has even launched the graph.
Here each implementation's hot latency is read two ways: (A) as the runs did (HotTimer, events on
the stream around each replay, blocks behind the sleep) and (B) with both events captured inside
the graph (external event nodes), one replay and one synchronize a sample, so no host time can
fall between them. Usage: python graph_events.py OUT_DIR"""
import json
import statistics
import sys
from pathlib import Path

import torch

from lab.__main__ import _load_built
from lab.kernels.shape import Shape
from lab.measure import peers as P
from lab.measure import timing
from lab.studies.measure_shape import input_sets

out = Path(sys.argv[1])
kernels, _ = _load_built(["warp_release_d64", "portable_model_inputs"])
peers, _ = P.resolve(["sdpa_cudnn", "sdpa_flash", "sdpa_efficient", "flex_attention"])


class GraphEventTimer:
    """reps launches between two events, all three captured in one graph; a sample is one replay."""

    def __init__(self, launches, reps):
        self.reps = reps
        self.start = torch.cuda.Event(enable_timing=True, external=True)
        self.end = torch.cuda.Event(enable_timing=True, external=True)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for launch in launches:
                launch()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.start.record()
            for i in range(reps):
                launches[i % len(launches)]()
            self.end.record()
        self.graph.replay()
        torch.cuda.synchronize()

    def samples(self, n):
        res = []
        for _ in range(n):
            self.graph.replay()
            self.end.synchronize()
            res.append(self.start.elapsed_time(self.end) * 1e3 / self.reps)
        return res


rows = []
for spec in ("1,8,512,64", "4,16,4096,64", "4,16,4096,128", "1,64,8192,128,causal,kv8,bf16",
             "1,71,8192,64,causal,kv1,bf16", "4,32,2048,128,causal,kv8,bf16"):
    shape = Shape.parse(spec)
    sets = [shape.random_inputs(outputs=True) for _ in range(input_sets(shape, timing.l2_bytes()))]
    impls = {}
    for name, attn in kernels.items():
        if not attn.not_taken(shape):
            impls[name] = ([lambda a=attn, t=t: a.launch(t[0], t[1], t[2], t[3], shape.causal) for t in sets], None)
    for peer in peers:
        if not peer.unsupported_reason(*sets[0][:3], shape.causal, None):
            impls[peer.name] = ([peer.bind(t[0], t[1], t[2], shape.causal, None) for t in sets], peer.context)
    for name, (ls, ctx) in impls.items():
        import contextlib

        with (ctx() if ctx else contextlib.nullcontext()):
            a_timer = timing.HotTimer(ls)
            b_timer = GraphEventTimer(ls, a_timer.reps)
            a, b = [], []
            for _ in range(6):  # interleaved blocks of 9
                a += [s / a_timer.reps for s in timing.timed_blocks(9, a_timer.graph.replay, hold=None)]
                b += b_timer.samples(9)
        row = {"shape": spec, "impl": name, "reps": a_timer.reps, "stream_events_us": statistics.median(a),
               "graph_events_us": statistics.median(b), "min_a": min(a), "min_b": min(b)}
        row["b_over_a"] = row["graph_events_us"] / row["stream_events_us"]
        rows.append(row)
        print(f"{spec:<32} {name:<22} reps {a_timer.reps:>4} stream-events {row['stream_events_us']:>9.2f} "
              f"graph-events {row['graph_events_us']:>9.2f} ratio {row['b_over_a']:.4f}  (min {min(a):.2f} / {min(b):.2f})",
              flush=True)
        del a_timer, b_timer
    del sets
    torch.cuda.empty_cache()
(out / "graph_events.json").write_text(json.dumps(rows, indent=1))
