"""Under the power cap, does step 67 lose to FA3 by its clock or by its cycles? (issue 46, the sustained D = 64 rows)

At each shape, after a 3 s lead-in of both kernels back to back (the GPU reaches its power cap), blocks of about
0.5 s of back-to-back launches alternate between the two (ABBA over ROUNDS rounds). Each block records the time a
launch (CUDA events over the block), the GPU's energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ) before and
after, and the SM clock, read every 2 ms by a thread over the block. From those: the time ratio (the sustained speedup),
the mean clock of each, the cycles a launch (time x mean clock) and the energy a launch.

    [ROUNDS=8] [GRAPH=1] python cap.py <variant> <peer> <shape> [<shape> ...]     (shapes as Shape.parse takes them)

CAP_DEFINES='{"MACRO": value}' builds the step with those defines (an exploration's knob). GRAPH=1 times replays of
a CUDA graph of about 5 ms of launches (lab.measure.timing.capture_graph, as the lab's sustained mode does) instead of
plain launches. blocks.csv goes to $OUT (or here); with GRAPH=1 blocks_graph.csv; CAP_TAG=<tag> adds _<tag>.

Writes blocks.csv (one row a block) and prints per shape the medians over rounds of each pair's ratios.
"""
import csv
import json
import os
import statistics
import sys
import threading
import time

import pynvml
import torch

from lab.kernels import build
from lab.kernels.manifest import get
from lab.kernels.shape import Shape
from lab.measure import peers
from lab.measure.timing import SUSTAINED_REPLAY_US, capture_graph

BLOCK_S, LEAD_S, ROUNDS = 0.5, 3.0, int(os.environ.get("ROUNDS", 8))
GRAPH = os.environ.get("GRAPH", "0") == "1"
pynvml.nvmlInit()
GPU = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())


class ClockSampler(threading.Thread):
    """The SM clock every 2 ms while `on` is set."""

    def __init__(self):
        super().__init__(daemon=True)
        self.on, self.samples, self.stop = threading.Event(), [], False

    def run(self):
        while not self.stop:
            if self.on.is_set():
                self.samples.append(pynvml.nvmlDeviceGetClockInfo(GPU, pynvml.NVML_CLOCK_SM))
            time.sleep(0.002)


def block(call, n, sampler):
    torch.cuda.synchronize()
    sampler.samples = []
    sampler.on.set()
    e0 = pynvml.nvmlDeviceGetTotalEnergyConsumption(GPU)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n):
        call()
    end.record()
    torch.cuda.synchronize()
    e1 = pynvml.nvmlDeviceGetTotalEnergyConsumption(GPU)
    sampler.on.clear()
    t_us = start.elapsed_time(end) * 1000 / n
    clk = sampler.samples or [float("nan")]
    return {"n": n, "t_us": t_us, "mj_launch": (e1 - e0) / n, "watts": (e1 - e0) / (t_us * n / 1000),
            "clk_mean": statistics.fmean(clk), "clk_min": min(clk), "clk_max": max(clk), "clk_reads": len(clk),
            "temp_c": pynvml.nvmlDeviceGetTemperature(GPU, pynvml.NVML_TEMPERATURE_GPU)}


def main():
    step, peer_name, shapes = sys.argv[1], sys.argv[2], [Shape.parse(a) for a in sys.argv[3:]]
    defines = json.loads(os.environ.get("CAP_DEFINES", "{}"))  # {macro: value} for the step's build (explorations)
    impl = step + "".join(f"_{k}{v}" for k, v in defines.items()) if defines else None
    attn = build.build_variant(get(step), defines=defines, impl=impl).load()
    peer = peers.get(peer_name)
    sampler = ClockSampler()
    sampler.start()
    rows = []
    with peer.context():
        for s in shapes:
            q, k, v = s.random_inputs()
            out = torch.empty_like(q)
            calls = {step: lambda: attn.launch(q, k, v, out, s.causal, None), peer_name: peer.bind(q, k, v, s.causal, None)}
            n, per_call = {}, {}
            for name, call in list(calls.items()):  # a launch's time, hot, for the block sizes
                block(call, 20, sampler)
                b = block(call, 20, sampler)
                per_call[name] = 1
                if GRAPH:
                    per_call[name] = max(1, round(SUSTAINED_REPLAY_US / b["t_us"]))
                    calls[name] = capture_graph([call], per_call[name]).replay
                n[name] = max(4, int(BLOCK_S / (b["t_us"] * per_call[name] * 1e-6)))
            lead_end = time.time() + LEAD_S
            while time.time() < lead_end:
                for name, call in calls.items():
                    block(call, n[name] // 4, sampler)
            names = list(calls)
            for r in range(ROUNDS):
                for name in (names if r % 2 == 0 else names[::-1]):
                    b = block(calls[name], n[name], sampler)
                    b.update(n=n[name] * per_call[name], t_us=b["t_us"] / per_call[name],
                             mj_launch=b["mj_launch"] / per_call[name])
                    rows.append({"shape": s.tuple_label, "impl": name, "round": r, "launches_a_call": per_call[name], **b})
            print(f"{s}: done", flush=True)
    sampler.stop = True
    out_dir = os.environ.get("OUT", ".")
    name = "blocks" + ("_graph" if GRAPH else "") + (f"_{os.environ['CAP_TAG']}" if os.environ.get("CAP_TAG") else "")
    with open(os.path.join(out_dir, name + ".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"\n{'shape':44s} {'speed':>6s} {'clk ours':>8s} {'clk peer':>8s} {'cycles':>7s} {'mJ':>6s} {'W ours':>6s} {'W peer':>6s}")
    for s in dict.fromkeys(r["shape"] for r in rows):
        by = lambda name, key: [r[key] for r in rows if r["shape"] == s and r["impl"] == name]  # noqa: E731
        ratio = lambda key: statistics.median(a / b for a, b in zip(by(step, key), by(peer_name, key)))  # noqa: E731
        print(f"{s:44s} {1 / ratio('t_us'):6.3f} {statistics.median(by(step, 'clk_mean')):8.0f} "
              f"{statistics.median(by(peer_name, 'clk_mean')):8.0f} "
              f"{statistics.median(a * c / (b * d) for a, b, c, d in zip(by(step, 't_us'), by(peer_name, 't_us'), by(step, 'clk_mean'), by(peer_name, 'clk_mean'))):7.3f} "
              f"{ratio('mj_launch'):6.3f} {statistics.median(by(step, 'watts')):6.0f} {statistics.median(by(peer_name, 'watts')):6.0f}")
    print("speed: peer's time / ours (>1: ours faster); cycles and mJ: ours / peer's a launch")


if __name__ == "__main__":
    main()
