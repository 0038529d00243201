"""Step 62's fp16 D = 128 ping-pong loop (HopperTileKind 0) at each configuration (a JSON object of label: defines, as
call1.sh's), SASS only, no GPU: the shortest path's instructions per 128 keys (lab.kernels.sass_mix.shortest_path) of
the static list's kernel (Lb0) and the counter's (Lb1), compiled from the twin (a configuration builds the twin; the patch puts FA_EXP_KV_APART in both files), the local loads and stores (spills) on the path and in the
whole kernel, then the static list's path in the order's characters (lab.kernels.sass_mix.describe_order). With
explore.patch applied:

    git apply data/explorations/2026-12-04-kv-released-apart-step62/explore.patch
    PYTHONPATH=. python data/explorations/2026-12-04-kv-released-apart-step62/paths.py '{"s62": {}, ...}'
    git apply -R data/explorations/2026-12-04-kv-released-apart-step62/explore.patch
"""
import json
import sys

from lab.kernels import sass_mix
from lab.kernels import switches as sw

orders = []
for label, defines in json.loads(sys.argv[1]).items():
    text = sw.sass("rescale_under_s", "sm_90a", {"FA_SASS_FP16_ONLY": "1", **defines}, twin=True)
    for kind in ("KindE0ELb0ELb0E", "KindE0ELb1ELb0E"):
        sass = sass_mix.kernel_sass(text, sass_mix.find_kernel(text, "attention_fwdI6__halfLi128E", kind))
        instrs = sass_mix.parse(sass)
        per, path = sass_mix.shortest_path(instrs, 128)
        local = lambda ids: sum(1 for i in ids if instrs[i].opcode.startswith(("LDL", "STL")))
        print(f"{label} {kind}: {per:.1f} per 128 keys, path {len(path)} instr, local ld/st on path {local(path)}, "
              f"in kernel {local(range(len(instrs)))}")
        if kind == "KindE0ELb0ELb0E":
            orders.append(sass_mix.describe_order(f"{label} {defines}", sass))
print("\n".join(orders))
