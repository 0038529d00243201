"""Where the noise of cold samples at the heaviest models shapes comes from (H100 run 3cdd64c: step 35
over cuDNN cold at Llama-3-70B S = 8192 1.005x [0.948, 1.066], replicates 1.026 / 1.016 / 0.975; the
samples a row takes after its minimum 9.5 % slower than its first 18, hot and cold alike).

Three ways of taking the same cold samples (flush, launch) of step 35, cuDNN and the portable end
(a 4 ms launch, the run's heaviest kind of row), in one process, each repeated REPEATS times:
  blocks  the run's design: rows in shuffled round robin, 6 turns of 3 samples each, then turns of 9
          for step 35 and cuDNN only (as when two rows have not met the stopping rule);
  single  the same round robin with one sample a turn (18 turns, then 9 more for the two rows);
  paired  step 35 and cuDNN alternating sample by sample inside one block (ABBA), 18 pairs a turn,
          the portable row a turn between.
Every turn records its SM clock, temperature and power before and after (NVML). Prints, per design:
each repeat's ratio of medians (cuDNN / step 35) and the spread of those ratios."""
import json
import os
import random
import sys
import time

import numpy as np
import pynvml
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from lab.kernels.variants import load
from lab.measure import hold as holds
from lab.measure.timing import L2Flusher

OUT = os.environ.get("OUT", ".")
REPEATS = int(os.environ.get("REPEATS", "4"))
pynvml.nvmlInit()
nv = pynvml.nvmlDeviceGetHandleByIndex(0)


def state():
    return (pynvml.nvmlDeviceGetClockInfo(nv, pynvml.NVML_CLOCK_SM), pynvml.nvmlDeviceGetTemperature(nv, 0),
            pynvml.nvmlDeviceGetPowerUsage(nv) / 1000)


def inputs(B, H, S, D, KV):
    g = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16, generator=g)
    k, v = (torch.randn(B, KV, S, D, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(2))
    return q, k, v, torch.empty_like(q)


def launches(shape):
    q, k, v, o = inputs(*shape)
    step35, portable = load("longest_first_queue"), load("portable_model_inputs")

    def cudnn():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    return {"step35": lambda: step35.launch(q, k, v, o, True), "cudnn": cudnn,
            "portable": lambda: portable.launch(q, k, v, o, True)}


flush = None
hold = holds.default()


def turn(bodies):
    """One block: [flush, event, body, event] for each body, behind the hold; returns us per body."""
    stream = torch.cuda.current_stream()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in bodies]
    for _ in range(3):  # retaken where the hold gave up before the host had enqueued the block
        hold.enqueue(stream.cuda_stream)
        try:
            for (s, e), body in zip(ev, bodies):
                flush()
                s.record(stream)
                body()
                e.record(stream)
        finally:
            hold.release()
        ev[-1][1].synchronize()
        if not hold.timed_out():
            return [s.elapsed_time(e) * 1e3 for s, e in ev]
    raise RuntimeError("hold timed out three times")


def design(name, L, rng):
    """{row: [(us, turn, clock, temp, power)]}"""
    rows = {r: [] for r in L}
    t = 0

    def take(row_bodies):
        nonlocal t
        before = state()
        us = turn([L[r] for r in row_bodies])
        after = state()
        for r, x in zip(row_bodies, us):
            rows[r].append((x, t, min(before[0], after[0]), after[1], (before[2] + after[2]) / 2))
        t += 1

    if name in ("blocks", "single"):
        per, first, extra = (3, 6, 1) if name == "blocks" else (1, 18, 9)
        for _ in range(first):
            order = list(L)
            rng.shuffle(order)
            for r in order:
                take([r] * per)
        for _ in range(extra):
            for r in rng.sample(["step35", "cudnn"], 2):
                take([r] * (9 if name == "blocks" else 1))
    else:  # paired
        for i in range(3):
            take(["step35", "cudnn", "cudnn", "step35"] * 3)
            take(["portable"] * 3)
        for i in range(1):
            take(["step35", "cudnn", "cudnn", "step35"] * 2 + ["step35"])
    return rows


def main():
    global flush
    flush = L2Flusher()
    flush()
    torch.cuda.synchronize()
    shapes = {"llama70b-8192": (1, 64, 8192, 128, 8), "falcon7b-8192": (1, 71, 8192, 64, 1)}
    rng = random.Random(0)
    record = {}
    lines = []
    for sname, shape in shapes.items():
        L = launches(shape)
        for f in L.values():
            f()
        torch.cuda.synchronize()
        for rep in range(REPEATS):
            for dname in rng.sample(["blocks", "single", "paired"], 3):
                rows = design(dname, L, rng)
                record[f"{sname}/{dname}/{rep}"] = rows
                med = {r: float(np.median([x[0] for x in v])) for r, v in rows.items()}
                ratio = med["cudnn"] / med["step35"]
                clocks = [x[2] for v in rows.values() for x in v]
                temps = [x[3] for v in rows.values() for x in v]
                line = (f"{sname} {dname:6s} rep {rep}: cudnn/step35 {ratio:.4f}  step35 {med['step35']:.0f} "
                        f"cudnn {med['cudnn']:.0f} portable {med['portable']:.0f} us; clock {min(clocks)}-"
                        f"{max(clocks)} MHz, temp {min(temps)}-{max(temps)} C")
                if dname == "paired":
                    a = np.array([x[0] for x in rows["step35"]][:18])
                    b = np.array([x[0] for x in rows["cudnn"]][:18])
                    pr = b / a
                    line += f"; pairwise ratio median {np.median(pr):.4f} sd {np.std(pr):.4f}"
                print(line, flush=True)
                lines.append(line)
    with open(os.path.join(OUT, "cold_samples.json"), "w") as f:
        json.dump(record, f)
    print("\nsummary: ratio over repeats (mean, sd, min, max)")
    for sname in shapes:
        for dname in ("blocks", "single", "paired"):
            rs = []
            for rep in range(REPEATS):
                rows = record[f"{sname}/{dname}/{rep}"]
                rs.append(np.median([x[0] for x in rows["cudnn"]]) / np.median([x[0] for x in rows["step35"]]))
            print(f"{sname} {dname:6s} {np.mean(rs):.4f} {np.std(rs, ddof=1):.4f} {min(rs):.4f} {max(rs):.4f}")


if __name__ == "__main__":
    main()
