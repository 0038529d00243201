"""The same for FlashAttention-3's plain forward kernel of a head dim and mask (its library decompressed to /tmp/fa3/lib.so):

    PYTHONPATH=. python fa3_loop_ops.py 128 0 "int / address,shuffle"
"""
import collections, sys
from pathlib import Path
from lab.kernels import sass_mix
from lab.measure import fa3
lib = Path("/tmp/fa3/lib.so")
names = sass_mix.entry_names(lib)
k = fa3.plain_forward_kernel(fa3.forward_kernels(sass_mix.demangle(names)), int(sys.argv[1]), sys.argv[2] == "1", "float16")
ins = sass_mix.parse(sass_mix.entry_sass(lib, names[k["index"]]))
loops = sass_mix.main_loops(ins)
print(k["rows"], k["keys"], loops)
head, back = loops[0]
p = sass_mix.paths(ins, head, back)[0]
cnt = collections.Counter()
for i in p:
    c = sass_mix.classify(ins[i].opcode)
    if c in sys.argv[3].split(","):
        cnt[ins[i].opcode] += 1
print(len(p), cnt.most_common())
