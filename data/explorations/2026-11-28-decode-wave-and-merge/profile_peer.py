"""One call of SDPA with a backend forced (cudnn, flash) on one decode shape, for Nsight Compute:

    ncu --clock-control none ... python profile_peer.py SPEC backend
"""

import sys

import torch

from lab.kernels.decode import DecodeShape
from lab.measure.decode_peers import DecodeSdpaPeer

shape = DecodeShape.parse(sys.argv[1])
x = shape.random_inputs(device="cuda", generator=torch.Generator().manual_seed(3))
peer = DecodeSdpaPeer(sys.argv[2])
with peer.context():
    launch = peer.bind(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"])
    launch()
torch.cuda.synchronize()
