"""Call 1's SASS: each main loop of step 66's fp16 D = 128 kernels (static list Lb0, counter Lb1; a trailing Lb1E is
step 66's NON_CAUSAL, in ck1 a fifth flag its CAUSAL_ONLY) with and without FA_EXPLORE_CAUSAL_KERNELS = 1, no GPU: the
shortest path's length a 128 keys and how many of a tile's 66 exponentials (MUFU.EX2) issue before and after P V's
wait (WARPGROUP.DEPBAR.LE gsb0, 0x0); the unmasked loop, then the masked one. The half-diagonal folder's loops.py with
its step and configurations changed. On 2f25280's tree with explore.patch applied:

    git apply data/explorations/2026-12-04-causal-kernels/explore.patch
    PYTHONPATH=. python data/explorations/2026-12-04-causal-kernels/loops.py > loops.txt
"""
from lab.kernels import sass_mix
from lab.kernels import switches as sw

STEP = "non_causal_kernels_d128"
CONFIGS = {"s66": {}, "ck1": {"FA_EXPLORE_CAUSAL_KERNELS": "1"}}
WAIT = "|W0x0|"
for label, defines in CONFIGS.items():
    text = sw.sass(STEP, "sm_90a", {"FA_SASS_FP16_ONLY": "1", **defines}, twin=True)
    for name in sass_mix.kernel_names(text):
        if "attention_fwdI6__halfLi128E" not in name:
            continue
        instrs = sass_mix.parse(sass_mix.kernel_sass(text, name))
        kind = name.split("Li128E")[1].split("EEv")[0]
        print(f"{label} {kind}: {len(instrs)} instructions")
        for head, back in sass_mix.main_loops(instrs):
            path = sass_mix.paths(instrs, head, back)[0]
            chars = [sass_mix.order_char(instrs[i]) for i in path]
            split = chars.index(WAIT) if WAIT in chars else len(chars)
            print(f"  loop at {instrs[head].addr:#x}: path {len(path)}, {sass_mix.keys_of(instrs, path, 128):.0f} keys;"
                  f" exponentials before the wait {chars[:split].count('e')}, after {chars[split + 1:].count('e')}")
