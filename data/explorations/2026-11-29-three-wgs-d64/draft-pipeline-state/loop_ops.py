"""The opcodes of some instruction classes on the shortest path of a kernel's main loop (lab.kernels.sass_mix),
for one of our kernels or FlashAttention-3's plain forward kernel of a head dim and mask:

    PYTHONPATH=. python loop_ops.py CUBIN KERNEL_REGEX "int / address,shuffle" [v]
    PYTHONPATH=. python loop_ops.py --fa3 128 0 "int / address,shuffle"   (its library decompressed to /tmp/fa3/lib.so)

loop_int_ops.txt: step 49 as committed (s49) and with pipeline_state.patch (p50), fp16, compiled here by nvcc 13.0;
fa3_d128_ops.txt: FA3's D = 128 non-causal kernel. v: also print each instruction.
"""
import collections
import re
import subprocess
import sys
from pathlib import Path

from lab.kernels import sass_mix


def loop_opcodes(sass: str, classes: list[str], verbose: bool) -> tuple[list[tuple[int, int]], int, list]:
    ins = sass_mix.parse(sass)
    loops = sass_mix.main_loops(ins)
    path = sass_mix.paths(ins, *loops[0])[0]
    count = collections.Counter()
    for i in path:
        if sass_mix.classify(ins[i].opcode) in classes:
            count[ins[i].opcode] += 1
            if verbose:
                print(ins[i])
    return loops, len(path), count.most_common()


fa3_kernel = sys.argv[1] == "--fa3"
args = sys.argv[2:] if fa3_kernel else sys.argv[1:]  # CUBIN KERNEL_REGEX or D CAUSAL, then the classes, [v]
if fa3_kernel:
    from lab.measure import fa3
    lib = Path("/tmp/fa3/lib.so")
    names = sass_mix.entry_names(lib)
    k = fa3.plain_forward_kernel(fa3.forward_kernels(sass_mix.demangle(names)), int(args[0]), args[1] == "1", "float16")
    label, sass = f"{k['rows']} {k['keys']}", sass_mix.entry_sass(lib, names[k["index"]])
else:
    text = subprocess.run([".venv/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump", "-sass", args[0]],
                          capture_output=True, text=True).stdout
    name = [n for n in sass_mix.kernel_names(text) if re.search(args[1], n)][0]
    label, sass = name[:120], sass_mix.kernel_sass(text, name)
loops, length, ops = loop_opcodes(sass, args[2].split(","), len(args) > 3)
print(label, loops)
print(length, ops)
