"""The shortest path of a D = 128 K/V loop, its integer / address, predicate / select and move instructions one a
line (lab.kernels.sass_mix's classes and paths), per 128 keys: step 53's fp16 kernel of HopperTileKind 0 from the
static list (FROM_QUEUE=false; built from the step's file, not its twin, with FA_SASS_FP16_ONLY and the defines in
DEFINES, comma-separated), or FlashAttention-3's plain forward kernel of head dim 128 (its library, .fa3).

    PYTHONPATH=. python int_ops.py ours [DEFINES]      # e.g. FA_STAGE_DESC_BASE
    PYTHONPATH=. python int_ops.py fa3-causal | fa3-full
"""
import sys
from collections import Counter

from lab.kernels import sass_mix, switches

SHOWN = ("int / address", "predicate / select", "move")


def shortest_path(sass: str, head_dim: int):
    instrs = sass_mix.parse(sass)
    best = None
    for head, back in sass_mix.main_loops(instrs):
        for p in sass_mix.paths(instrs, head, back):
            per = len(p) * 128 / sass_mix.keys_of(instrs, p, head_dim)
            if best is None or per < best[0]:
                best = (per, p)
    return instrs, best


which = sys.argv[1]
if which == "ours":
    defines = {"FA_SASS_FP16_ONLY": "1", **{d: "1" for d in (sys.argv[2].split(",") if len(sys.argv) > 2 else [])}}
    text = switches.sass("two_stages_three_wgs_d64", "sm_90a", defines, twin=False)
    sass = sass_mix.kernel_sass(text, sass_mix.find_kernel(text, "attention_fwdI6__halfLi128E", "KindE0ELb0E"))
else:
    from lab.measure import fa3

    lib = fa3.library_path()
    names = sass_mix.entry_names(lib)
    k = fa3.plain_forward_kernel(fa3.forward_kernels(sass_mix.demangle(names)), 128, which == "fa3-causal", "float16")
    sass = sass_mix.entry_sass(lib, names[k["index"]])
instrs, (per, path) = shortest_path(sass, 128)
print(f"# {' '.join(sys.argv[1:])}: {per:.0f} instructions per 128 keys on the loop's shortest path")
shown = Counter()
for i in path:
    ins = instrs[i]
    c = sass_mix.classify(ins.opcode)
    if c in SHOWN:
        print(f"{c:<20} {ins.addr:#06x} {'@P ' if ins.predicated else ''}{ins.opcode} {ins.operands}")
        shown[f"{c}: {'U' if ins.mnemonic.startswith('U') else 'vector'}"] += 1
print("# " + ", ".join(f"{k} {v}" for k, v in sorted(shown.items())))
