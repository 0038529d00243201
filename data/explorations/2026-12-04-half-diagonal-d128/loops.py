"""Each main loop of step 65's fp16 D = 128 kernels (static list Lb0, counter Lb1) in the configurations of calls 1-3,
SASS only, no GPU: its shortest path's length a 128 keys and how many of a tile's 66 exponentials (MUFU.EX2) issue
before and after P V's wait (WARPGROUP.DEPBAR.LE gsb0, 0x0). A kernel with two bodies has two pairs of loops (the
unmasked loop, then the masked one, per body, in address order); nc's non-causal kernels are the NON_CAUSAL
instantiations (a trailing Lb1E). On d144b93's tree with explore.patch applied:

    git apply data/explorations/2026-12-04-half-diagonal-d128/explore.patch
    PYTHONPATH=. python data/explorations/2026-12-04-half-diagonal-d128/loops.py > loops.txt
"""
from lab.kernels import sass_mix
from lab.kernels import switches as sw

import json
import sys

STEP = "fa3_sections_causal_d128"
CONFIGS = {"s65": {}, "hd": {"FA_HALF_DIAGONAL_D128": "1"}, "dup": {"FA_HALF_DIAGONAL_D128": "2"},
           "ck": {"FA_HALF_DIAGONAL_D128": "3"}, "nc": {"FA_CAUSAL_FREE_D128": "1"}}
if len(sys.argv) > 2:  # another step and configurations (added for ../2026-12-04-causal-kernels): STEP '{"label": {defines}}'
    STEP, CONFIGS = sys.argv[1], json.loads(sys.argv[2])
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
