"""Inside `ncu --nvtx --nvtx-include profile/`: one profiled launch of each configuration of EXP_CONFIGS (as exp.py of
../2026-11-28-kv-apart-d128 takes them: {"label": ["variant", {defines}]}) and of FA3 at shape argv[1], on the same
inputs, each after two warm-up launches, each in its own NVTX range "profile"; the labels in launch order are printed
(the capture's rows come in that order).

    python prof3.py <B,H,S,D[,causal][,kvN][,bf16]>
"""
import json
import os
import sys

import torch

from lab.kernels import build
from lab.kernels.manifest import get
from lab.kernels.shape import Shape
from lab.measure import peers

s = Shape.parse(sys.argv[1])
q, k, v = s.random_inputs()
out = torch.empty_like(q)


def warm_then_profile(call):
    for i in range(3):
        if i == 2:
            torch.cuda.nvtx.range_push("profile")
        call()
        torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


for label, (variant, defines) in json.loads(os.environ["EXP_CONFIGS"]).items():
    impl = variant + "".join(f"_{k}{v}" for k, v in defines.items()) if defines else None
    attn = build.build_variant(get(variant), defines=defines, impl=impl).load()
    warm_then_profile(lambda: attn.launch(q, k, v, out, s.causal, None))
    print("profiled", label, flush=True)
fa3 = peers.get("flash_attn3")
with fa3.context():
    warm_then_profile(fa3.bind(q, k, v, s.causal, None))
print("profiled fa3", flush=True)
