"""One profiled launch (inside `ncu --nvtx --nvtx-include profile/`) of a step (a variant name) or a peer
(lab.measure.peers: flash_attn3, sdpa_cudnn) at shape argv[2]: two warm-up launches, then one inside the NVTX
range "profile", as lab.measure.profile does.

    python prof_src.py <variant or peer> <B,H,S,D[,causal]>
"""
import sys
import torch
from lab.kernels import build
from lab.kernels.manifest import get
from lab.kernels.shape import Shape
from lab.measure import peers

name, s = sys.argv[1], Shape.parse(sys.argv[2])
q, k, v = s.random_inputs()


def warm_then_profile(call):
    """Two warm-up calls, then the one NVTX range "profile" that ncu's --nvtx-include picks."""
    for i in range(3):
        if i == 2:
            torch.cuda.nvtx.range_push("profile")
        call()
        torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


if name in ("flash_attn3", "sdpa_cudnn", "sdpa_flash"):
    peer = peers.get(name)
    with peer.context():
        warm_then_profile(peer.bind(q, k, v, s.causal, None))
else:
    attn = build.build_variant(get(name)).load()
    out = torch.empty_like(q)
    warm_then_profile(lambda: attn.launch(q, k, v, out, s.causal, None))
