"""The draft's header change (step49.patch's fa/tile_size.cuh hunk applied to the tree at /work/main) against the committed tree (a git
worktree at /tmp/main_ref): each step's SASS, with the anonymous namespace's hash (it follows the file's path)
normalised; "code (the function names aside)" drops the `Function :` lines, whose mangled names spell out the
HopperTileOf alias, which the patch nests one level deeper.

    python sass_same.py kernels/variants/35_longest_first_queue.cu ...   (from /work/main, .venv active)
"""
import subprocess, sys, tempfile, difflib, re
from pathlib import Path
sys.path.insert(0, "/work/main")
from lab.kernels.switches import cuobjdump_path, same_code
FLAGS = ["-cubin", "-arch=sm_90a", "-O3", "-lineinfo", "-std=c++17", "-D__CUDA_NO_HALF_OPERATORS__",
         "-D__CUDA_NO_HALF_CONVERSIONS__", "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__",
         "--expt-relaxed-constexpr"]
def sass(tree, src):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "k.cubin"
        subprocess.run(["/usr/local/cuda/bin/nvcc", *FLAGS, f"-I{tree}/kernels/include", "-o", str(out), f"{tree}/{src}"], check=True, capture_output=True)
        return subprocess.run([cuobjdump_path(), "-sass", str(out)], capture_output=True, text=True, check=True).stdout
norm = lambda t: re.sub(r"_GLOBAL__N__[0-9a-f]+", "_GLOBAL__N__", t)
for src in sys.argv[1:]:
    a, b = norm(sass("/work/main", src)), norm(sass("/tmp/main_ref", src))
    d = [l for l in difflib.unified_diff(b.splitlines(), a.splitlines(), lineterm="", n=0) if l.startswith(("+", "-"))]
    code = lambda t: [l for l in t.splitlines() if "Function :" not in l]
    print(src, "code (the function names aside):", "same" if code(a) == code(b) else "DIFFERS")
    print(src, "same" if a == b else f"DIFFERS ({len(d)} lines)", "; instructions:", sum(1 for l in a.splitlines() if "/*" in l and ";" in l), flush=True)
raise SystemExit

d = [l for l in difflib.unified_diff(b.splitlines(), a.splitlines(), lineterm="", n=0) if l.startswith(("+", "-"))]
print(len(d)); print("\n".join(x[:200] for x in d[:10]))
