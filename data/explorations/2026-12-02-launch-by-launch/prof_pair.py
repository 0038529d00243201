"""Inside `ncu --nvtx --nvtx-include profile/`: one profiled launch each of a prefill step (a variant name) and a
peer (lab.measure.peers: flash_attn3) on the same inputs at shape argv[3], each after two warm-up launches, each in
its own NVTX range "profile" (the capture's rows tell them apart by kernel name).

    python prof_pair.py <variant> <peer> <B,H,S,D[,causal][,kvN][,bf16]>
"""
import sys

import torch

from lab.kernels import build
from lab.kernels.manifest import get
from lab.kernels.shape import Shape
from lab.measure import peers

step, peer_name, s = sys.argv[1], sys.argv[2], Shape.parse(sys.argv[3])
q, k, v = s.random_inputs()


def warm_then_profile(call):
    for i in range(3):
        if i == 2:
            torch.cuda.nvtx.range_push("profile")
        call()
        torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


attn = build.build_variant(get(step)).load()
out = torch.empty_like(q)
warm_then_profile(lambda: attn.launch(q, k, v, out, s.causal, None))
peer = peers.get(peer_name)
with peer.context():
    warm_then_profile(peer.bind(q, k, v, s.causal, None))
