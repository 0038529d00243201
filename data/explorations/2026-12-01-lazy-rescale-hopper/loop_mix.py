"""Instruction counts of every Hopper kernel's K/V loop in `cuobjdump -sass` dumps of step 53's twin with
lazy_rescale.patch applied (lab.kernels.sass_mix, the report's tool: per 128 keys of a warp's 16 rows; the shortest
path is the one that skips O's rescale, the longest the one that takes it), fp16 builds:

    git apply lazy_rescale.patch
    for v in 0 1 2; do nvcc -std=c++17 -O3 --expt-relaxed-constexpr -gencode arch=compute_90a,code=sm_90a \\
        -Ikernels/include -DFA_SASS_FP16_ONLY=1 -DFA_EXP_LAZY_RESCALE=$v -cubin -Xptxas -v \\
        kernels/knockouts/53_two_stages_three_wgs_d64.cu -o l$v.cubin && cuobjdump -sass l$v.cubin > l$v.sass; done
    PYTHONPATH=. python loop_mix.py l0.sass l1.sass l2.sass
"""
import re
import sys

from lab.kernels import sass_mix

KINDS = {"0": "short", "1": "long (D = 64)", "2": "three CTAs (D = 64)", "3": "three warpgroups, static",
         "4": "three warpgroups, counter"}
for f in sys.argv[1:]:
    text = open(f).read()
    print("==", f)
    for name in sass_mix.kernel_names(text):
        d = int(re.search(r"attention_fwdI\w+?Li(\d+)E", name).group(1))
        kind, queue = re.search(r"HopperTileKindE(\d)ELb(\d)", name).groups()
        paths = sass_mix.loop_mix(sass_mix.kernel_sass(text, name), head_dim=d)["paths"]
        if not paths:
            continue
        short, long_ = paths[0]["per_128_keys"], paths[-1]["per_128_keys"]
        print(f"D={d} {KINDS[kind]:26s} counter={queue} paths={len(paths)} shortest={sum(short.values()):.0f} "
              f"longest={sum(long_.values()):.0f}  shortest: " + ", ".join(f"{k} {v:.0f}" for k, v in short.items() if v))
