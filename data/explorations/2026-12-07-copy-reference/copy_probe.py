"""Call 3 of this exploration: what about the decode checks lowers the first copy after them (call 2, H100: 2,583
GB/s, then 3,012 at once after)?

Each probe runs the decode end's 15 grid checks, then something, then copy_bandwidth with its 15 samples kept (are
the first samples slow, or all of them?), the torch allocator's cudaMalloc count around it, and nvidia-smi's
memory and SM clocks right after the checks.

    python copy_probe.py OUT
"""
import json
import statistics
import subprocess
import sys
import time

import torch

from lab.measure import timing
from lab.studies import decode_study
from lab.measure.decode_check import decode_grid
from lab.studies.measure_decode import COPY_BYTES

out = sys.argv[1]
end = decode_study.branch_end()
fn = decode_study.gpu_build([end], print)[end][0]
rows = []


def clocks() -> str:
    q = "clocks.mem,clocks.sm,power.draw,pstate"
    return subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"], capture_output=True,
                          text=True).stdout.strip()


def checks() -> None:
    for i, s in enumerate(decode_grid()):
        decode_study.gpu_check(end, fn, s, i)


def copy_samples() -> dict:
    mallocs = torch.cuda.memory_stats().get("num_alloc_retries", 0), torch.cuda.memory_stats().get(
        "segment.all.allocated", 0)
    src = torch.empty(COPY_BYTES, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    timer = timing.HotTimer(lambda: dst.copy_(src))
    us = timer.samples(15)
    seg = torch.cuda.memory_stats().get("segment.all.allocated", 0)
    del src, dst, timer
    gbps = [2 * COPY_BYTES / (u * 1e3) for u in us]
    return {"median_gbps": statistics.median(gbps), "samples_gbps": [round(g) for g in gbps],
            "segments_before": mallocs[1], "segments_after": seg}


def probe(label: str, between) -> None:
    checks()
    state = clocks()
    between()
    got = copy_samples()
    again = copy_samples()
    rows.append({"label": label, "clocks_after_checks": state, "first": got, "again": again})
    print(f"{label:>28}: {got['median_gbps']:6.0f} GB/s, then {again['median_gbps']:6.0f} | after the checks: {state}"
          f" | segments {got['segments_before']}->{got['segments_after']}\n{'':>30}first's samples: "
          f"{got['samples_gbps']}", flush=True)


rows.append({"label": "fresh", "first": copy_samples()})
print(f"fresh: {rows[-1]['first']['median_gbps']:.0f} GB/s", flush=True)
probe("checks, copy", lambda: None)
probe("checks, synchronize, copy", torch.cuda.synchronize)
probe("checks, 2 s, copy", lambda: time.sleep(2))
probe("checks, empty_cache, copy", torch.cuda.empty_cache)
probe("checks, 1 GB touched, copy", lambda: torch.empty(1 << 30, dtype=torch.uint8, device="cuda").fill_(1))
json.dump(rows, open(f"{out}/copy_probe.json", "w"), indent=1)
