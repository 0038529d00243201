"""After call 1 (CPU only): the bf16 D = 128 ping-pong loop of step 62 and `early`, whose grouped bf16 rows lost 2-3 %,
the shortest path per 128 keys (both kernels) and its order (the static list's), as paths.py does for fp16. With the
draft in place (the first lines of call1.sh): PYTHONPATH=. python paths_bf16.py"""
from lab.kernels import sass_mix
from lab.kernels import switches as sw

for label, variant in (("s62", "rescale_under_s"), ("early", "v_desc_early")):
    text = sw.sass(variant, "sm_90a", {}, twin=False)
    for kind in ("KindE0ELb0ELb0E", "KindE0ELb1ELb0E"):
        sass = sass_mix.kernel_sass(text, sass_mix.find_kernel(text, "attention_fwdI13__nv_bfloat16Li128E", kind))
        instrs = sass_mix.parse(sass)
        per, path = sass_mix.shortest_path(instrs, 128)
        local = sum(1 for i in instrs if i.opcode.startswith(("LDL", "STL")))
        print(f"{label} bf16 {kind}: {per:.1f} per 128 keys, {len(instrs)} instructions in the kernel, local {local}")
        if kind == "KindE0ELb0ELb0E":
            print(sass_mix.describe_order(label, sass))
