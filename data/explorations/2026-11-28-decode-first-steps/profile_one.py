"""One decode call of each step given on one shape, for Nsight Compute (nothing timed here):

    ncu --clock-control none --section SpeedOfLight ... python profile_one.py SPEC step[,step]
"""

import sys

import torch

from lab import variants
from lab.kernels.decode import DecodeShape

shape = DecodeShape.parse(sys.argv[1])
x = shape.random_inputs(device="cuda", generator=torch.Generator().manual_seed(3))
for name in sys.argv[2].split(","):
    fn = variants.load(name)
    fn(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"], out=x["out"])
torch.cuda.synchronize()
