"""Call 2: where the decode profile's time goes on an H100 (run 20261206T081702Z-d154863: 25.7 s for the set's two
shapes in one ncu process). Times, one after another on one GPU, the target process of
lab.measure.decode_profile without ncu and under ncu (lab.measure.decode_profile.ncu_command, the run's command)
over subsets of the run's calls, so that the process's fixed cost, a shape's and a call's can be told apart.
Writes $OUT/split.txt; each capture's log beside it.

    PYTHONPATH=. python data/explorations/2026-12-06-decode-set-time/split.py
"""
import os
import subprocess
import sys
import time
from pathlib import Path

from lab.kernels import manifest
from lab.measure.decode_profile import ncu_command
from lab.measure.ncu_process import find_ncu

OUT = Path(os.environ.get("OUT", "/tmp/out"))
S1, S2 = "8,32,8,128,8192,bf16", "1,32,8,128,131072,bf16"
STEPS = manifest.names(problem=manifest.DECODE)
PEERS = ["flex_attention", "sdpa_cudnn", "sdpa_default", "sdpa_flash"]
ALL = STEPS + PEERS
END, PARENT = STEPS[-1], manifest.get(STEPS[-1]).parent
CASES = [  # (name, calls, under ncu)
    ("warm (builds, flex compile)", [(S1, ALL), (S2, ALL)], False),
    ("bare, both shapes, 20 names", [(S1, ALL), (S2, ALL)], False),
    ("ncu, both shapes, 20 names (the run's)", [(S1, ALL), (S2, ALL)], True),
    ("ncu, one shape, the end alone", [(S1, [END])], True),
    ("ncu, one shape, 20 names", [(S1, ALL)], True),
    ("ncu, both shapes, 16 steps, no peers", [(S1, STEPS), (S2, STEPS)], True),
    ("ncu, S1 20 names, S2 end, parent, peers", [(S1, ALL), (S2, [PARENT, END] + PEERS)], True),
]


def target(calls):
    return [sys.executable, "-m", "lab.measure.decode_profile",
            *[a for spec, names in calls for a in ("--shape", spec, "--target", ",".join(names))]]


def main() -> None:
    from lab.kernels.build import build_all

    OUT.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    build_all(STEPS)  # in parallel first: the target's one-at-a-time JIT builds took 190.8 s on a fresh machine
    lines = [f"{'case':44} {'calls':>5} {'rc':>3} {'seconds':>8}", f"{'build_all (16 decode steps)':44} {'':5} {'':3} "
             f"{time.perf_counter() - t0:8.1f}"]
    for i, (name, calls, under) in enumerate(CASES):
        cmd = ncu_command(find_ncu(), calls) if under else target(calls)
        t0 = time.perf_counter()
        with open(OUT / f"case{i}.log", "w") as log:
            rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=240).returncode
        lines.append(f"{name:44} {sum(len(n) for _, n in calls):5d} {rc:3d} {time.perf_counter() - t0:8.1f}")
        print(lines[-1], flush=True)
    (OUT / "split.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
