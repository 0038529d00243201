"""The shortest path through step 61's fp16 D = 128 loop (HopperTileKind 0, static list), one character an instruction,
for each configuration of calls 1-10, built from the step's twin with explore9.patch applied (it holds every macro of
the earlier patches; it applies to the tree up to 885c430, before step 62 moved the twin: run this in a worktree
of 885c430). The legend and the listing are ../2026-12-03-d128-rescale-placement/order.py's. SASS only, no GPU:

    git apply data/explorations/2026-12-04-kv-apart-step61/explore9.patch
    PYTHONPATH=. python data/explorations/2026-12-04-kv-apart-step61/orders.py > data/explorations/2026-12-04-kv-apart-step61/orders.txt
    git apply -R data/explorations/2026-12-04-kv-apart-step61/explore9.patch
"""
import os
import pathlib
import types

from lab.kernels import sass_mix, switches

# order.py's definitions (its legend, char and show), without its command line, which starts at the first branch on argv.
source = (pathlib.Path(__file__).resolve().parent.parent / "2026-12-03-d128-rescale-placement" / "order.py").read_text()
order = types.SimpleNamespace()
exec(source.split('if sys.argv[1] == "ours64":')[0], order.__dict__)

CONFIGS = {  # label: defines, as the calls' EXP_CONFIGS
    "s61": {}, "ap3": {"FA_EXP_KV_APART": 1}, "ap2": {"FA_EXP_KV_APART": 1, "FA_TILE_STAGES_D128": 2},
    "so1": {"FA_EXP_SOFTMAX_ORDER": 1}, "mc4": {"FA_EXP_SOFTMAX_ORDER": 1, "FA_EXP_MAX_CHAINS": 4},
    "mc8": {"FA_EXP_SOFTMAX_ORDER": 1, "FA_EXP_MAX_CHAINS": 8}, "oc2": {"FA_EXP_ONEPHASE_CHAINS": 2},
    "oc4": {"FA_EXP_ONEPHASE_CHAINS": 4}, "oc8": {"FA_EXP_ONEPHASE_CHAINS": 8}, "e60": {"FA_CONDITIONAL_RESCALE": 0},
    "d1": {"FA_EXP_DROP_RESCALE": 1}, "d0": {"FA_CONDITIONAL_RESCALE": 0, "FA_EXP_DROP_RESCALE": 1},
    "ls2": {"FA_EXP_LAZY_SHIFT": 2}, "vt1": {"FA_EXP_VOTE_AT_TOP": 1},
    "vt2": {"FA_EXP_VOTE_AT_TOP": 1, "FA_EXP_LAZY_SHIFT": 2}, "ls3": {"FA_EXP_LAZY_SHIFT": 3},
    "vt3": {"FA_EXP_VOTE_AT_TOP": 1, "FA_EXP_LAZY_SHIFT": 3}, "d3": {"FA_EXP_LAZY_SHIFT": 3, "FA_EXP_DROP_RESCALE": 1},
    "vt4": {"FA_EXP_VOTE_AT_TOP": 2, "FA_EXP_LAZY_SHIFT": 3},
    "ex1": {"FA_EXP_EXIT_ON_MOVE": 1, "FA_EXP_LAZY_SHIFT": 3},
    "va3": {"FA_EXP_VOTE_AFTER_S": 1, "FA_EXP_LAZY_SHIFT": 3}, "va1": {"FA_EXP_VOTE_AFTER_S": 1},
    "vu3": {"FA_EXP_VOTE_AFTER_S": 2, "FA_EXP_LAZY_SHIFT": 3},
    "va4": {"FA_EXP_VOTE_AFTER_S": 1, "FA_EXP_LAZY_SHIFT": 4}, "ra3": {"FA_EXP_VOTE_AFTER_S": 3, "FA_EXP_LAZY_SHIFT": 3},
    "ra4": {"FA_EXP_VOTE_AFTER_S": 3, "FA_EXP_LAZY_SHIFT": 4},
}
if os.environ.get("ORDERS_ONLY"):  # a comma-separated list of labels: print those alone
    CONFIGS = {k: v for k, v in CONFIGS.items() if k in os.environ["ORDERS_ONLY"].split(",")}
for label, defines in CONFIGS.items():
    text = switches.sass("conditional_rescale", "sm_90a", {"FA_SASS_FP16_ONLY": "1", **defines}, twin=True)
    sass = sass_mix.kernel_sass(text, sass_mix.find_kernel(text, "attention_fwdI6__halfLi128E", "KindE0ELb0E"))
    order.show(f"{label} {defines}", sass)
