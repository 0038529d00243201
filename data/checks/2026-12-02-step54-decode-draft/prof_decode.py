"""One profiled call (inside `ncu --nvtx --nvtx-include profile/`) of a decode step at a decode shape: two warm-up
calls, then one inside the NVTX range "profile" (its split kernel and, where it splits, its merge).

    python prof_decode.py STEP SHAPE
"""
import sys

import torch

from lab import variants
from lab.kernels.decode import DecodeShape

step, spec = sys.argv[1], sys.argv[2]
fn = variants.load(step)
x = DecodeShape.parse(spec).random_inputs(seed=11)
args = (x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"])
need = fn.workspace_bytes(x["q"], x["k_cache"], x["block_table"])
ws = torch.empty(need, dtype=torch.uint8, device="cuda") if need else None
for _ in range(2):
    fn.launch(*args, x["out"], workspace=ws)
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("profile")
fn.launch(*args, x["out"], workspace=ws)
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
