"""One launch of step 33 and of cuDNN at a shape, for ncu (L2 and DRAM traffic)."""
import sys, torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from lab.kernels.variants import load
B, H, S, D = map(int, sys.argv[1].split(","))
k33 = load("three_ctas_d64")
g = torch.Generator(device="cuda").manual_seed(0)
q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
o = torch.empty_like(q)
for _ in range(3):
    k33.launch(q, k, v, o, False)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        F.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
