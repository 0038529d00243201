"""Call 2: which peer makes the decode profile's ncu process cost 18 s more than the 16 steps alone (call 1's split)."""
import os, subprocess, sys, time
from pathlib import Path
from lab.kernels import manifest
from lab.measure.decode_profile import ncu_command
from lab.measure.ncu_process import find_ncu
OUT = Path(os.environ.get("OUT", "/tmp/out")); OUT.mkdir(parents=True, exist_ok=True)
S1, S2 = "8,32,8,128,8192,bf16", "1,32,8,128,131072,bf16"
ST = manifest.names(problem=manifest.DECODE)
SD = ["sdpa_cudnn", "sdpa_default", "sdpa_flash"]
def bare(calls):
    return [sys.executable, "-m", "lab.measure.decode_profile",
            *[a for s, n in calls for a in ("--shape", s, "--target", ",".join(n))]]
CASES = [("ncu, 16 steps + 3 sdpa, both", [(S1, ST + SD), (S2, ST + SD)], 1),
         ("ncu, 16 steps + flex, both", [(S1, ST + ["flex_attention"]), (S2, ST + ["flex_attention"])], 1),
         ("bare, 16 steps, both", [(S1, ST), (S2, ST)], 0),
         ("bare, 16 steps + flex, both", [(S1, ST + ["flex_attention"]), (S2, ST + ["flex_attention"])], 0),
         ("ncu, 16 steps, both (again)", [(S1, ST), (S2, ST)], 1)]
lines = []
for i, (name, calls, under) in enumerate(CASES):
    cmd = ncu_command(find_ncu(), calls) if under else bare(calls)
    t0 = time.perf_counter()
    with open(OUT / f"p{i}.log", "w") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=200).returncode
    lines.append(f"{name:40} {sum(len(n) for _, n in calls):4d} {rc:3d} {time.perf_counter() - t0:7.1f}")
    print(lines[-1], flush=True)
(OUT / "peers_cost.txt").write_text("\n".join(lines) + "\n")
