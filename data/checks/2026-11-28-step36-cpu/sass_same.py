"""For each sm_90a step using issue_scores/issue_pv: its SASS from the branch's headers and main's must be the
same code (the STEPPED default keeps steps 9-35 unchanged).

    python sass_same.py BRANCH_CHECKOUT MAIN_CHECKOUT 09_wgmma.cu 10_producer_warpgroup.cu ...
"""
import subprocess, sys, tempfile, re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root
from lab.kernels.switches import cuobjdump_path, same_code
BRANCH, MAIN = sys.argv.pop(1), sys.argv.pop(1)  # checkouts of the step-36 branch and of main
FLAGS = ["-cubin", "-arch=sm_90a", "-O3", "-lineinfo", "-std=c++17", "-D__CUDA_NO_HALF_OPERATORS__",
         "-D__CUDA_NO_HALF_CONVERSIONS__", "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__",
         "--expt-relaxed-constexpr"]
def sass(tree, src):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "k.cubin"
        subprocess.run(["/usr/local/cuda/bin/nvcc", *FLAGS, f"-I{tree}/kernels/include", "-o", str(out),
                        f"{tree}/kernels/variants/{src}"], check=True, capture_output=True)
        return subprocess.run([cuobjdump_path(), "-sass", str(out)], capture_output=True, text=True, check=True).stdout
def one(src):
    a, b = sass(BRANCH, src), sass(MAIN, src)
    return src, same_code(a, b)
srcs = sys.argv[1:]
with ThreadPoolExecutor(2) as pool:
    for src, same in pool.map(one, srcs):
        print(src, "same" if same else "DIFFERS", flush=True)
