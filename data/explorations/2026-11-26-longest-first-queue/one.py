"""Launches of step 34, step 35 and cuDNN at a grouped-query bf16 causal shape, for ncu
(../2026-11-25-llama70b-ncu/one.py with step 35 beside step 34)."""
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from lab.kernels.variants import load

B, H, S, D, KV = map(int, sys.argv[1].split(","))
steps = [load("warp_release_d64"), load("longest_first_queue")]
g = torch.Generator(device="cuda").manual_seed(0)
q = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16, generator=g)
k, v = (torch.randn(B, KV, S, D, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(2))
o = torch.empty_like(q)
for _ in range(3):
    for step in steps:
        step.launch(q, k, v, o, True)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
torch.cuda.synchronize()
