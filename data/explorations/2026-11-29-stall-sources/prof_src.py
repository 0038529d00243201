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
if name in ("flash_attn3", "sdpa_cudnn", "sdpa_flash"):
    peer = peers.get(name)
    with peer.context():
        call = peer.bind(q, k, v, s.causal, None)
        for _ in range(2):
            call()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("profile")
        call()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
else:
    attn = build.build_variant(get(name)).load()
    out = torch.empty_like(q)
    for _ in range(2):
        attn.launch(q, k, v, out, s.causal, None)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("profile")
    attn.launch(q, k, v, out, s.causal, None)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
