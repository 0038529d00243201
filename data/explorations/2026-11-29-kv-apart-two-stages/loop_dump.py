"""The shortest path of a kernel's main loop (lab.kernels.sass_mix), non-math instructions marked >>; run from the
repository root: PYTHONPATH=. python loop_dump.py ours CUBIN KERNEL_REGEX | loop_dump.py fa3 D CAUSAL (FA3 at /tmp/fa3/lib.so)"""
import re, subprocess, sys
from pathlib import Path
from lab.kernels import sass_mix
if sys.argv[1] == "fa3":
    from lab.measure import fa3
    lib = Path("/tmp/fa3/lib.so"); names = sass_mix.entry_names(lib)
    k = fa3.plain_forward_kernel(fa3.forward_kernels(sass_mix.demangle(names)), int(sys.argv[2]), sys.argv[3] == "1", "float16")
    sass = sass_mix.entry_sass(lib, names[k["index"]])
else:
    text = subprocess.run([".venv/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump", "-sass", sys.argv[2]], capture_output=True, text=True).stdout
    name = [n for n in sass_mix.kernel_names(text) if re.search(sys.argv[3], n)][0]
    sass = sass_mix.kernel_sass(text, name)
ins = sass_mix.parse(sass)
loops = sass_mix.main_loops(ins)
for lp in loops:
    path = sass_mix.paths(ins, *lp)[0]
    print("# loop", lp, "len", len(path))
    for i in path:
        c = sass_mix.classify(ins[i].opcode)
        mark = "   " if c in ("fp32 math", "MUFU", "convert", "tensor") else ">> "
        print(mark, f"{c[:10]:10s}", ins[i])
