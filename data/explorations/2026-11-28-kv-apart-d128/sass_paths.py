"""The paths through each attention kernel's main loop and their instructions a warp per 128 keys
(lab.kernels.sass_mix), step 36 against step 48, compiled here by nvcc for sm_90a (no GPU):

    PYTHONPATH=. python data/explorations/2026-11-28-kv-apart-d128/sass_paths.py > .../sass_paths.txt

A row: (element type, D, tile kind, FROM_QUEUE), the number of paths, each path's count.
"""
import re
import subprocess
import tempfile
from pathlib import Path

from lab.kernels import sass_mix

CUOBJDUMP = ".venv/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump"
FLAGS = ["-std=c++17", "-O3", "--expt-relaxed-constexpr", "-gencode", "arch=compute_90a,code=sm_90a", "-Ikernels/include"]

for step in ("36_uniform_descriptors", "48_unmasked_loop"):
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        subprocess.run(["/usr/local/cuda/bin/nvcc", *FLAGS, "-cubin", f"kernels/variants/{step}.cu", "-o", str(cubin)],
                       check=True)
        text = subprocess.run([CUOBJDUMP, "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
    for name in sass_mix.kernel_names(text):
        tag = re.search(r"attention_fwdI(\w+?)Li(\d+)ELN2fa14HopperTileKindE(\d)ELb(\d)", name)
        if not tag:
            continue
        m = sass_mix.loop_mix(sass_mix.kernel_sass(text, name), head_dim=int(tag.group(2)))
        print(step, tag.groups(), "paths", len(m["paths"]), "per128",
              [round(sum(p["per_128_keys"].values())) for p in m["paths"]])
