"""Build step 34 as is (base), with K/V multicast across two-CTA clusters (mc2) and with the clusters'
launch and schedule but no multicast (cl2); launch each once at one shape (for ncu)."""
import dataclasses, sys
import torch
from lab.kernels import build
from lab.kernels.manifest import get

CONFIGS = {"base": {}, "mc2": {"FA_EXP_KV_MULTICAST": 2}, "cl2": {"FA_EXP_KV_MULTICAST": 2, "FA_EXP_MC_DECOUPLE": 1}}
B, H, S, D = map(int, sys.argv[1].split(","))
kernels = {}
for label, defines in CONFIGS.items():
    r = build.build_variant(dataclasses.replace(get("warp_release_d64"), twin=None), defines=defines,
                            impl=("x" + "_".join(f"{k}{v}" for k, v in sorted(defines.items()))) if defines else None)
    assert r.ok, r.log[-2000:]
    kernels[label] = r.load()
g = torch.Generator(device="cuda").manual_seed(1)
q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
out = torch.empty_like(q)
for label, kern in kernels.items():  # in CONFIGS order: ncu's launches 1, 2, 3
    kern.launch(q, k, v, out, False)
    torch.cuda.synchronize()
    print(label, "launched", flush=True)
