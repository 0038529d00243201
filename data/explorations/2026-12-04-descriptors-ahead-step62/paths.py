"""Step 62 and the draft (draft/62x_v_desc_ahead.cu, appended to the manifest as v_desc_ahead), SASS only: the fp16
D = 128 ping-pong loop's shortest path per 128 keys (lab.kernels.sass_mix.shortest_path) of the static list's kernel
(Lb0) and the counter's (Lb1), local loads and stores, and on the static list's path the instructions between the
last wait before P V's issue and the first P V HGMMA (the shuffle the draft moves), then the path's order
(lab.kernels.sass_mix.describe_order). With the draft in place:

    cp draft/62x_v_desc_ahead.cu ../../../kernels/variants/ && cat draft/manifest_62x.toml >> ../../../kernels/variants/manifest.toml
    PYTHONPATH=. python data/explorations/2026-12-04-descriptors-ahead-step62/paths.py
"""
from lab.kernels import sass_mix
from lab.kernels import switches as sw

orders = []
for label, variant in (("s62", "rescale_under_s"), ("ahead", "v_desc_ahead")):
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
