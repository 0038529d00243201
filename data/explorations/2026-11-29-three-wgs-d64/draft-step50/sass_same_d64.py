"""Per kernel (element type, D, tile kind, FROM_QUEUE): is B's SASS A's (function names aside), and the
instructions of each. sass_same_d64.txt: A step 49, B step 50 (step50.patch applied), each compiled here by
`nvcc -std=c++17 -O3 --expt-relaxed-constexpr -gencode arch=compute_90a,code=sm_90a -Ikernels/include -cubin`:

    PYTHONPATH=. python sass_same_d64.py A.cubin B.cubin
"""
import re, subprocess, sys
from lab.kernels import sass_mix
from lab.kernels.switches import cuobjdump_path
def kernels(cubin):
    text = subprocess.run([cuobjdump_path(), "-sass", cubin], capture_output=True, text=True, check=True).stdout
    out = {}
    for name in sass_mix.kernel_names(text):
        tag = re.search(r"attention_fwdI(\w+?)Li(\d+)ELN2fa14HopperTileKindE(\d)ELb(\d)", name)
        body = [re.sub(r"_GLOBAL__N__\w+", "", l) for l in sass_mix.kernel_sass(text, name).splitlines() if "Function :" not in l]
        out[tag.groups()] = body
    return out
a, b = kernels(sys.argv[1]), kernels(sys.argv[2])
for k in sorted(a):
    n = sum(1 for l in b[k] if ";" in l)
    print(k, "same" if a[k] == b[k] else "DIFFERS", "instructions", sum(1 for l in a[k] if ";" in l), "->", n)
