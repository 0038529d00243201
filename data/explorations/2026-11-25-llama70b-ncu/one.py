"""One launch of step 34 and of cuDNN at a GQA bf16 causal shape, for ncu."""
import sys, torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from lab.kernels.variants import load
B, H, S, D, KV = map(int, sys.argv[1].split(","))
k34 = load("warp_release_d64")
g = torch.Generator(device="cuda").manual_seed(0)
q = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16, generator=g)
k, v = (torch.randn(B, KV, S, D, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(2))
o = torch.empty_like(q)
for _ in range(3):
    k34.launch(q, k, v, o, True)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
torch.cuda.synchronize()
