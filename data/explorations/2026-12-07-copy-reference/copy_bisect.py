"""Call 2 of this exploration: which part of a run's process before its decode stage lowers copy_bandwidth?

Call 1 found none of the first candidates (the prefill load, busy CPUs, the timing method): copy_bandwidth read
3,010-3,017 GB/s on an H100 in every state. But the 4-GPU run 20261128T180707Z-4d2adc9 shows a process effect on
one host: its parent process (the run's own, which measured the ceilings, the cross-validation and loaded the decode
steps) read 3,797 GB/s where its four child processes, one a GPU, read 4,216-4,230. This replays the parent's work
in its order, in one process, with copy_bandwidth (and the HotTimer's reps, its graph's copies a sample) after each
part; then copy_bandwidth in a fresh child process on the same GPU, for the board.

    python copy_bisect.py OUT
"""
import json
import statistics
import subprocess
import sys
import time

import torch

from lab.measure import timing
from lab.studies.measure_decode import COPY_BYTES, copy_bandwidth

out = sys.argv[1]
rows = []


def point(label: str) -> None:
    got = copy_bandwidth()
    src = torch.empty(COPY_BYTES, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    timer = timing.HotTimer(lambda: dst.copy_(src))
    again = 2 * COPY_BYTES / (statistics.median(timer.samples(15)) * 1e3)
    del src, dst, timer
    rows.append({"label": label, "gbps": got["gbps"], "again_gbps": again, "reps": None, "t": time.time()})
    print(f"{label:>34}: copy_bandwidth {got['gbps']:6.0f} GB/s, again {again:6.0f}", flush=True)


def reps_now() -> int:
    src = torch.empty(COPY_BYTES, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    return timing.HotTimer(lambda: dst.copy_(src)).reps


point("fresh")
rows[-1]["reps"] = reps_now()
from lab.measure import roofline  # noqa: E402

ceil = roofline.measure_ceilings()
print(f"ceilings: dram {ceil['dram_gbps']:.0f} GB/s", flush=True)
point("after the ceilings")
try:
    from lab.measure.crossval import cross_validate
    from lab.measure.peers import SdpaPeer
    from lab.studies.shapes import shapes_from

    for shape in shapes_from("canonical")[:2]:
        r = cross_validate(shape, SdpaPeer("flash"))
        print(f"crossval {shape.id}: {r.get('ratio', r.get('error'))}", flush=True)
    point("after the cross-validation")
except Exception as exc:  # noqa: BLE001
    print(f"crossval failed: {type(exc).__name__}: {exc}", flush=True)
from lab.studies import decode_study  # noqa: E402

end = decode_study.branch_end()
fns = {n: f for n, (f, _) in decode_study.gpu_build([end], print).items()}
point("after loading the decode end")
from lab.measure.decode_check import decode_grid  # noqa: E402

passed = sum(bool(decode_study.gpu_check(end, fns[end], s, i).get("passed")) for i, s in enumerate(decode_grid()))
print(f"decode grid: {passed} of {len(decode_grid())} passed", flush=True)
point("after the decode checks")
rows[-1]["reps"] = reps_now()
torch.cuda.empty_cache()
point("after empty_cache")
child = subprocess.run([sys.executable, "-c", "from lab.studies.measure_decode import copy_bandwidth as c; "
                        "print(c()['gbps'])"], capture_output=True, text=True)
print(f"{'fresh child process':>34}: copy_bandwidth {child.stdout.strip()} {child.stderr[-300:]}", flush=True)
rows.append({"label": "fresh child process", "gbps": float(child.stdout.strip() or "nan")})
json.dump({"rows": rows, "ceilings": ceil}, open(f"{out}/copy_bisect.json", "w"), indent=1)
