"""How long back-to-back launches take to reach the clocks a GPU holds under load, and what each
implementation's latency is there (the design question of the sustained mode, issue 45).

Per (shape, implementation): 3 s idle, then 8 s of back-to-back replays of a CUDA graph of about 20 ms of
launches, each replay timed by CUDA events, while a thread reads NVML every 25 ms (SM clock, power,
temperature, throttle reasons). Then, for the interleave: two implementations alternating in 200 ms
blocks for 6 s without idling. Everything goes to OUT/sustained_probe.json; a summary is printed.

    PYTHONPATH=. python data/explorations/2026-11-27-fa3-peer/sustained_probe.py OUT_DIR
"""
import json
import statistics
import sys
import threading
import time
from pathlib import Path

import pynvml
import torch

from lab.kernels import variants
from lab.kernels.shape import Shape
from lab.measure import peers

out_dir = Path(sys.argv[1])
pynvml.nvmlInit()
h = pynvml.nvmlDeviceGetHandleByIndex(0)


def nvml_sample():
    return dict(t=time.perf_counter(), clock=pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                power=pynvml.nvmlDeviceGetPowerUsage(h) / 1000, temp=pynvml.nvmlDeviceGetTemperature(h, 0),
                reasons=pynvml.nvmlDeviceGetCurrentClocksEventReasons(h))


class Sampler:
    def __init__(self):
        self.rows, self.stop = [], threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            self.rows.append(nvml_sample())
            time.sleep(0.025)


def graph_of(launch, target_ms=20.0):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            launch()
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(s)
        launch()
        e1.record(s)
        torch.cuda.synchronize()
        reps = max(1, int(target_ms / max(e0.elapsed_time(e1), 1e-3)))
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            for _ in range(reps):
                launch()
    torch.cuda.synchronize()
    return g, reps


def run_for(graphs, seconds, block_ms=None):
    """Replay `graphs` (list of (name, graph, reps)) back to back for `seconds`; one graph for the whole
    time, or several alternating every block_ms. Returns per replay (name, t_start, us per launch)."""
    events, t_end = [], time.perf_counter() + seconds
    i, name, g, reps = 0, *graphs[0]
    block_end = time.perf_counter() + (block_ms or 1e9) / 1e3
    while time.perf_counter() < t_end:
        if block_ms and time.perf_counter() > block_end:
            i = (i + 1) % len(graphs)
            name, g, reps = graphs[i]
            block_end = time.perf_counter() + block_ms / 1e3
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        events.append((name, time.perf_counter(), a, b, reps))
        if len(events) > 4:  # keep a few in flight, never an empty queue
            events[-5][3].synchronize()
    torch.cuda.synchronize()
    return [(n, t, a.elapsed_time(b) * 1e3 / r) for n, t, a, b, r in events]


result = {"gpu": torch.cuda.get_device_name(), "runs": []}
step = variants.load("longest_first_queue")
fa3, cudnn = peers.get("flash_attn3"), peers.get("sdpa_cudnn")
for spec in ("4,16,4096,128", "4,16,4096,64", "1,16,16384,128,causal"):
    shape = Shape.parse(spec)
    q, k, v = shape.random_inputs()
    o = torch.empty_like(q)
    launches = {"longest_first_queue": lambda: step(q, k, v, is_causal=shape.causal, out=o),
                "flash_attn3": fa3.bind(q, k, v, shape.causal, None)}
    with cudnn.context():
        launches["sdpa_cudnn"] = cudnn.bind(q, k, v, shape.causal, None)
        graphs = {n: graph_of(f) for n, f in launches.items()}
        for name, (g, reps) in graphs.items():
            time.sleep(3)
            sampler = Sampler()
            sampler.thread.start()
            t0 = time.perf_counter()
            rows = run_for([(name, g, reps)], 8.0)
            sampler.stop.set()
            sampler.thread.join()
            lat = [(t - t0, us) for _, t, us in rows]
            first = statistics.median(us for t, us in lat[:3])
            last = statistics.median(us for t, us in lat if t > 6.0)
            settle = next((t for t, us in lat if abs(us / last - 1) < 0.01 and all(abs(u / last - 1) < 0.02
                          for tt, u in lat if tt >= t)), None)
            nv = [dict(r, t=r["t"] - t0) for r in sampler.rows]
            late = [r for r in nv if r["t"] > 6.0]
            print(f"{spec:24} {name:20} first {first:8.1f} us, after 6 s {last:8.1f} us ({last / first:.3f}x), "
                  f"within 1 % from {settle if settle is None else round(settle, 2)} s; clock "
                  f"{nv[0]['clock']}->{statistics.median(r['clock'] for r in late):.0f} MHz, power "
                  f"{statistics.median(r['power'] for r in late):.0f} W, temp {late[-1]['temp']} C", flush=True)
            result["runs"].append(dict(shape=spec, impl=name, reps=reps, latency=lat, nvml=nv))
        # the interleave: step 35 and FA3 alternating in 200 ms blocks, the GPU never idle
        time.sleep(3)
        sampler = Sampler()
        sampler.thread.start()
        t0 = time.perf_counter()
        rows = run_for([(n, *graphs[n]) for n in ("longest_first_queue", "flash_attn3")], 6.0, block_ms=200)
        sampler.stop.set()
        sampler.thread.join()
        by = {}
        for n, t, us in rows:
            if t - t0 > 3.0:
                by.setdefault(n, []).append(us)
        print(f"{spec:24} interleaved 200 ms blocks, after 3 s: " + ", ".join(f"{n} {statistics.median(x):.1f} us"
                                                                             for n, x in by.items()), flush=True)
        result["runs"].append(dict(shape=spec, impl="interleaved", latency=[(n, t - t0, us) for n, t, us in rows],
                                   nvml=[dict(r, t=r["t"] - t0) for r in sampler.rows]))
(out_dir / "sustained_probe.json").write_text(json.dumps(result))
