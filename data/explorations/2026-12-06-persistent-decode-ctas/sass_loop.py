"""Step 72's decode kernel against step 70's in SASS (no GPU: nvcc and cuobjdump), for the README: each kernel's
static instruction count and its main loop per 128 keys a warp (lab.kernels.sass_mix, shortest path), class by class,
and the loop's opcodes whose counts differ. From the repository root, the step applied (step72.patch):

    python data/explorations/2026-12-06-persistent-decode-ctas/sass_loop.py
"""
from collections import Counter

from lab.kernels import sass_mix, switches

KERNELS = {"l2_promotion_by_gpu": "10decode_fwdI13__nv_bfloat16Li{D}ELi1E",
           "persistent_decode_ctas": "decode_fwd_persistentI13__nv_bfloat16Li{D}ELi1E"}

text = {name: switches.sass(name, "sm_90") for name in KERNELS}  # each step's cubin, cached under build/sass
for D in (64, 128):
    loop = {}
    for name, part in KERNELS.items():
        sass = sass_mix.kernel_sass(text[name], sass_mix.find_kernel(text[name], part.format(D=D)))
        instrs = sass_mix.parse(sass)
        per_128 = sass_mix.loop_mix(sass, head_dim=D)["paths"][0]["per_128_keys"]
        _, path = sass_mix.shortest_path(instrs, D)
        loop[name] = Counter(instrs[i].opcode for i in path)
        print(f"D = {D}, {name}: {len(instrs)} instructions; main loop per 128 keys a warp: "
              f"{sum(per_128.values()):.0f} ({', '.join(f'{k} {v:.0f}' for k, v in per_128.items() if v)})")
    a, b = loop.values()
    print(f"D = {D}, the loop's opcodes that differ (step 70, step 72, one iteration): "
          + ", ".join(f"{op} {a[op]}/{b[op]}" for op in sorted(set(a) | set(b)) if a[op] != b[op]))
