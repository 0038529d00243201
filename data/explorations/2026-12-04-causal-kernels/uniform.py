"""Each fp16 kernel's main loop (the first loop of each kernel: the unmasked one) in a step's SASS, no GPU: the
shortest path's length, its SHFL and R2UR, and how many of its instructions run on the uniform datapath (U*).
The row0 question of calls 1-2: in step 66's causal kernels the K/V ring's state lives in vector registers and each
tile pays two SHFL.IDX + R2UR pairs (the 4 other SHFL are the row max's butterflies); in its non-causal ones not.

    PYTHONPATH=. python data/explorations/2026-12-04-causal-kernels/uniform.py non_causal_kernels_d128 > uniform_s66.txt
    PYTHONPATH=. python .../uniform.py non_causal_kernels_d128 --twin FA_EXPLORE_UNIFORM_ROW0=1 > uniform_ur.txt
        (explore.patch applied to step 66's twin, on 2f25280's tree)
    PYTHONPATH=. python .../uniform.py uniform_row0_d128 > uniform_s67.txt   (the step as written)

Kernel tags: head dim, HopperTileKind, FROM_QUEUE, ONE_LOOP, NON_CAUSAL (step 66 on).
"""
import sys
from lab.kernels import sass_mix
from lab.kernels import switches as sw

step, args = sys.argv[1], sys.argv[2:]
twin = "--twin" in args
defines = dict(a.split("=") for a in args if "=" in a)
text = sw.sass(step, "sm_90a", {"FA_SASS_FP16_ONLY": "1", **defines}, twin=twin)  # the step as written, or its twin
for name in sass_mix.kernel_names(text):
    if "attention_fwdI6__half" not in name:
        continue
    instrs = sass_mix.parse(sass_mix.kernel_sass(text, name))
    tag = name.split("attention_fwdI6__half")[1].split("EEv")[0].replace("LN2fa14HopperTileKindE", " kind ")
    head, back = sass_mix.main_loops(instrs)[0]
    ops = [instrs[i].opcode for i in sass_mix.paths(instrs, head, back)[0]]
    print(f"{tag}: {len(instrs)} instructions; loop path {len(ops)}; SHFL {sum(o.startswith('SHFL') for o in ops)}, "
          f"R2UR {sum(o.startswith('R2UR') for o in ops)}, uniform {sum(o.startswith('U') for o in ops)}")
