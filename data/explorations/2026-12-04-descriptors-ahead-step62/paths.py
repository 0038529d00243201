"""Step 62 and the drafts (step 62's file plus draft/62x_v_desc_ahead.diff as v_desc_ahead, plus draft/62y_v_desc_early.diff
as v_desc_early, each appended to the manifest by its draft/manifest_*.toml, as call1.sh does), SASS only: the fp16
D = 128 ping-pong loop's shortest path per 128 keys (lab.kernels.sass_mix.shortest_path) of the static list's kernel
(Lb0) and the counter's (Lb1), local loads and stores in the kernel and the shuffles on the path, then the static list's
path in the order's characters (lab.kernels.sass_mix.describe_order). With the draft in place:

    (the first lines of call1.sh, from the repository root)
    PYTHONPATH=. python data/explorations/2026-12-04-descriptors-ahead-step62/paths.py [s62,ahead,early]
"""
from lab.kernels import sass_mix
from lab.kernels import switches as sw

import sys

# label -> variant: step 62 and the drafts whose manifest entries are in place (argv: labels, default all)
ALL = {"s62": "rescale_under_s", "ahead": "v_desc_ahead", "early": "v_desc_early"}
VARIANTS = [(k, ALL[k]) for k in (sys.argv[1].split(",") if len(sys.argv) > 1 else ALL)]
orders = []
for label, variant in VARIANTS:
    text = sw.sass(variant, "sm_90a", {"FA_SASS_FP16_ONLY": "1"}, twin=False)
    for kind in ("KindE0ELb0ELb0E", "KindE0ELb1ELb0E"):
        sass = sass_mix.kernel_sass(text, sass_mix.find_kernel(text, "attention_fwdI6__halfLi128E", kind))
        instrs = sass_mix.parse(sass)
        per, path = sass_mix.shortest_path(instrs, 128)
        local = sum(1 for i in range(len(instrs)) if instrs[i].opcode.startswith(("LDL", "STL")))
        shfl = [instrs[i].opcode for i in path if instrs[i].opcode.startswith("SHFL")]
        print(f"{label} {kind}: {per:.1f} per 128 keys, local ld/st in kernel {local}, SHFL on the path {len(shfl)}")
        if kind == "KindE0ELb0ELb0E":
            orders.append(sass_mix.describe_order(f"{label}", sass))
print("\n".join(orders))
