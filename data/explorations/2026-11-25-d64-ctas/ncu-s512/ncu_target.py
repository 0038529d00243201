"""One launch of a configuration (built by exp.py, cached) or cuDNN inside NVTX range 'prof'."""
import dataclasses, json, sys
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from lab.kernels import build
from lab.kernels.manifest import get
label, variant, defines, shape = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
parts = shape.split(","); B, H, S, D = map(int, parts[:4]); causal = "causal" in parts
dt = torch.bfloat16 if "bf16" in parts else torch.float16
kv = next((int(p[2:]) for p in parts if p.startswith("kv")), H)
q = torch.randn(B, H, S, D, device="cuda", dtype=dt); k = torch.randn(B, kv, S, D, device="cuda", dtype=dt); v = torch.randn_like(k)
out = torch.empty_like(q)
if label == "cudnn":
    def f():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=kv != H)
else:
    impl = ("x" + "_".join(f"{k_}{v_}" for k_, v_ in sorted(defines.items()))) if defines else None
    r = build.build_variant(dataclasses.replace(get(variant), twin=None), defines=defines, impl=impl)
    kern = r.load()
    f = lambda: kern.launch(q, k, v, out, causal)
f(); f(); torch.cuda.synchronize()
torch.cuda.nvtx.range_push("prof"); f(); torch.cuda.nvtx.range_pop(); torch.cuda.synchronize()
