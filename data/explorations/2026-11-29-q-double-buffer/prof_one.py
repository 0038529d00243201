"""One profiled launch (inside `ncu --nvtx --nvtx-include profile/`) of an exploration configuration of
../2026-11-28-kv-apart-d128/exp.py (EXP_CONFIGS in the environment, the label as argv[1]) at shape argv[2]:
two warm-up launches, then one inside the NVTX range "profile", as lab.measure.profile does for a variant."""
import os, sys
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "2026-11-28-kv-apart-d128"))
label, spec = sys.argv[1], sys.argv[2]
os.environ["EXP_ONLY"] = label
import exp  # noqa: E402  (reads EXP_CONFIGS)
from lab.kernels.shape import Shape  # noqa: E402

exp.CONFIGS = {label: exp.CONFIGS[label]}
attn = exp.built()[label]
s = Shape.parse(spec)
q, k, v = s.random_inputs()
out = torch.empty_like(q)
for _ in range(2):
    attn.launch(q, k, v, out, s.causal, None)
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("profile")
attn.launch(q, k, v, out, s.causal, None)
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
