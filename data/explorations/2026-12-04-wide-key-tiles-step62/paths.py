import sys, json
from lab.kernels import sass_mix, switches as sw
for label, d in json.loads(sys.argv[1]).items():
    text = sw.sass("rescale_under_s", "sm_90a", {"FA_SASS_FP16_ONLY": "1", **d}, twin=True)
    for kind in ("KindE0ELb0ELb0E", "KindE0ELb1ELb0E"):
        name = sass_mix.find_kernel(text, "attention_fwdI6__halfLi128E", kind)
        sass = sass_mix.kernel_sass(text, name)
        instrs = sass_mix.parse(sass)
        per, path = sass_mix.shortest_path(instrs, 128)
        lo, hi = min(path), max(path)
        ldl = sum(1 for i in path if instrs[i].opcode.startswith(("LDL", "STL")))
        allldl = sum(1 for x in instrs if x.opcode.startswith(("LDL", "STL")))
        print(f"{label} {kind}: {per:.1f} per 128 keys, path {len(path)} instr, local ld/st on path {ldl}, in kernel {allldl}")
