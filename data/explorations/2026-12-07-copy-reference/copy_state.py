"""Issue 50, target 1's bar: does the copy a run measures at its decode stage read low because of the load before it?

In run 20261206T161107Z-45f9f6b (H100) the decode stage's copy (lab.studies.measure_decode.copy_bandwidth: 256 MB,
median of 15 CUDA-graph samples) read 2,572 GB/s while the same run's roofline copy (ceilings.json,
lab.measure.roofline.measure_ceilings: 1 GB, best of 20 event-timed launches) read 3,014; on the H200 run
20261207T061416Z-36dadea, 3,769 against 4,219. In a fresh process on another H100
(../2026-12-07-decode-mixed-phases-h200, profile.py) copy_bandwidth read 3,024. This measures copy_bandwidth and a
plain event-timed 256 MB copy (best and median of 20) fresh, then right after LOAD_S seconds of back-to-back
prefill (SDPA at (4, 16, 4096, 128), fp16, as a run's timing stage loads the GPU before its decode stage), then after
10 and 30 s idle, each with the GPU's SM clock, power and temperature (nvidia-smi); and fresh with every CPU busy at
nice 10, as the factorial's builds keep them during a run's decode stage.

    python copy_state.py OUT
"""
import json
import os
import statistics
import subprocess
import sys
import time

import torch

from lab.studies.measure_decode import COPY_BYTES, copy_bandwidth

LOAD_S = 60.0
out = sys.argv[1]


def gpu_state() -> str:
    q = "clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active"
    return subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"], capture_output=True,
                          text=True).stdout.strip()


src = torch.empty(COPY_BYTES, dtype=torch.uint8, device="cuda").random_()
dst = torch.empty_like(src)


def plain_copy(reps: int = 20) -> dict:
    """The 256 MB copy timed launch by launch with CUDA events: GB/s of the best and of the median."""
    for _ in range(3):
        dst.copy_(src)
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for a, b in events:
        a.record()
        dst.copy_(src)
        b.record()
    torch.cuda.synchronize()
    ms = [a.elapsed_time(b) for a, b in events]
    gbps = lambda t_ms: 2 * COPY_BYTES / (t_ms * 1e6)  # noqa: E731
    return {"best_gbps": gbps(min(ms)), "median_gbps": gbps(statistics.median(ms))}


def point(label: str) -> dict:
    state = gpu_state()
    graph = copy_bandwidth()
    plain = plain_copy()
    row = {"label": label, "graph_gbps": graph["gbps"], **plain, "gpu_before": state, "gpu_after": gpu_state()}
    print(f"{label:>22}: graph median {graph['gbps']:6.0f}  plain best {plain['best_gbps']:6.0f}  plain median "
          f"{plain['median_gbps']:6.0f} GB/s | {state}", flush=True)
    return row


rows = [point("fresh"), point("fresh again")]
# A run's decode stage has the factorial's builds beside it (lab.studies.factorial.start_prebuild: nvcc at nice 10 on
# every core); busy loops at the same niceness stand in for them.
burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=lambda: os.nice(10))
           for _ in range(os.cpu_count() or 1)]
time.sleep(2)
rows.append(point("CPUs busy (nice 10)"))
for b in burners:
    b.kill()
q, k, v = (torch.randn(4, 16, 4096, 128, device="cuda", dtype=torch.float16) for _ in range(3))
t0, calls = time.time(), 0
while time.time() - t0 < LOAD_S:
    for _ in range(50):
        torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
    calls += 50
print(f"load: {calls} SDPA calls in {time.time() - t0:.1f} s | {gpu_state()}", flush=True)
rows.append(point("after the load"))
rows.append(point("after it, again"))
time.sleep(10)
rows.append(point("10 s idle"))
time.sleep(20)
rows.append(point("30 s idle"))
json.dump({"rows": rows, "load_s": LOAD_S, "load_calls": calls}, open(f"{out}/copy_state.json", "w"), indent=1)
