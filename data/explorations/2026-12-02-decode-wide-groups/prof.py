"""One profiled call (inside `ncu --nvtx --nvtx-include profile/`) at a decode shape, of a decode step's
configuration (sweep.py's NAME=STEP[@MACRO=V], loaded under sweep.py's extension name so that its build is reused)
or of an SDPA backend (sdpa:cudnn): two warm-up calls, then one inside the NVTX range "profile".

    python prof.py NAME=STEP[@MACRO=V] SHAPE
    python prof.py sdpa:BACKEND SHAPE
"""
import sys

import torch

from lab import variants
from lab.kernels.decode import DecodeShape
from lab.measure.decode_peers import DecodeSdpaPeer

what, spec = sys.argv[1], sys.argv[2]
x = DecodeShape.parse(spec).random_inputs(seed=11)
args = (x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"])
if what.startswith("sdpa:"):
    peer = DecodeSdpaPeer(what.split(":", 1)[1])
    with peer.context():
        launch = peer.bind(*args)
        for _ in range(2):
            launch()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("profile")
        launch()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    sys.exit(0)
name, cfg = what.split("=", 1)
base, *knobs = cfg.split("@")
fn = variants.load(base, defines=dict(k.split("=", 1) for k in knobs), impl=f"{base}_{name}")
need = fn.workspace_bytes(x["q"], x["k_cache"], x["block_table"])
ws = torch.empty(need, dtype=torch.uint8, device="cuda") if need else None
for _ in range(2):
    fn.launch(*args, x["out"], workspace=ws)
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("profile")
fn.launch(*args, x["out"], workspace=ws)
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
