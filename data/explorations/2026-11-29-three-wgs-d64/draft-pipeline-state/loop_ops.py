"""The opcodes of one class set on the shortest path of a kernel's main loop (lab.kernels.sass_mix):

    PYTHONPATH=. python loop_ops.py CUBIN KERNEL_REGEX "int / address,shuffle" [v]

loop_int_ops.txt: step 49 as committed (s49) and with pipeline_state.patch (p50), fp16, compiled here by nvcc 13.0.
"""
import re, subprocess, sys, collections
from lab.kernels import sass_mix
text = subprocess.run([".venv/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump", "-sass", sys.argv[1]], capture_output=True, text=True).stdout
name = [n for n in sass_mix.kernel_names(text) if re.search(sys.argv[2], n)][0]
ins = sass_mix.parse(sass_mix.kernel_sass(text, name))
loops = sass_mix.main_loops(ins)
print(name[:120], loops)
head, back = loops[0]
p = sass_mix.paths(ins, head, back)[0]
cnt = collections.Counter()
for i in p:
    c = sass_mix.classify(ins[i].opcode)
    if c in sys.argv[3].split(","):
        cnt[ins[i].opcode] += 1
        if len(sys.argv) > 4: print(ins[i])
print(len(p), cnt.most_common())
