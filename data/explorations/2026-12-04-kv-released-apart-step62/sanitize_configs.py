"""The sanitizer's target side for exploration configurations (lab.measure.sanitize takes steps, knock-outs and
tuning trials, not a configuration's exploration macros): builds each label of EXP_CONFIGS named on the command
line (as ../2026-11-28-kv-apart-d128/exp.py builds them, so the builds are the ones it checked and timed) and runs
lab.measure.sanitize's small shapes and the model-input ones each takes, then prints "ran <label>". Run under
compute-sanitizer:

    compute-sanitizer --tool racecheck --kernel-name kns=attention_fwd python sanitize_configs.py a128s2,a176r
"""
import json
import os
import sys

import torch

from lab.kernels import build
from lab.kernels.manifest import get
from lab.measure import sanitize

configs = json.loads(os.environ["EXP_CONFIGS"])
for label in sys.argv[1].split(","):
    variant, defines = configs[label]
    impl = variant + "".join(f"_{k}{v}" for k, v in defines.items()) if defines else None
    r = build.build_variant(get(variant), defines=defines, impl=impl)
    if not r.ok:
        print(label, "BUILD FAILED", r.log[-2000:], flush=True)
        continue
    attn = r.load()
    for shape in sanitize.shapes_for(attn):
        q, k, v = shape.random_inputs()
        attn(q, k, v, is_causal=shape.causal)
    torch.cuda.synchronize()
    print(f"ran {label}", flush=True)
