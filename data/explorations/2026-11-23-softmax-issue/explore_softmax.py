"""Exploration (not the study): the softmax's instruction issue inside step 28 (model_inputs).

Nsight Compute puts step 28's consumers' top stall at "wait" (a fixed-latency dependency), about
twice cuDNN's, and its tensor pipe 6-7 points below cuDNN's. Two knobs of
kernels/include/fa/mma_attention.cuh, both off in every step:
- FA_SOFTMAX_CHAINS=K: a row's max and sum over its 32 scores (BC = 128) in K independent chains
  instead of one dependent chain of 32 FMNMX / FADD;
- FA_EXP2_POLY_MOD=M, FA_EXP2_POLY_REM=R: 2^x on the FMA pipe (a cubic) for score columns
  n % M < R, MUFU.EX2 for the rest. At D = 64 one tile's exponentials take the SM's MUFU units
  (16 a clock) as long as its two GEMMs take the tensor cores, so MUFU and tensor pipe must both
  run near their peak for the GEMMs to; moving some exponentials to the FMA pipe (128 a clock)
  takes MUFU off the critical path at the price of issue slots (8 instructions for one).

Modes: as explore_d64_tiles.py (check on the model-inputs grid, hot timing beside SDPA's backends:
VARIANTS=name[:MACRO=v+MACRO=v],...; CAP; CHECK; OUT), or NCU_SHAPE="B,H,Hkv,S,D,dtype[,c]": one
launch of each configuration, then cuDNN, in VARIANTS order (for ncu -k regex:attention|cudnn).
run_call.sh is the device call that produced call1/.
"""
import importlib.util
import os
import pathlib
import runpy
import sys

HERE = pathlib.Path(__file__).resolve().parent
D64 = HERE.parent / "2026-11-23-d64-tiles" / "explore_d64_tiles.py"

if __name__ == "__main__" and os.environ.get("NCU_SHAPE"):
    spec = importlib.util.spec_from_file_location("explore_d64_tiles", D64)
    d64 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(d64)
    base = d64.base
    import torch

    p = os.environ["NCU_SHAPE"].split(",")
    B, H, Hkv, S, D = map(int, p[:5])
    dtype = base.DTYPES[p[5]][0]
    causal = len(p) > 6 and p[6] == "c"
    names = os.environ.get("VARIANTS", "model_inputs").split(",")
    libs = {n: d64.library(n) for n in names}
    q = torch.randn(B, H, S, D, device="cuda", dtype=dtype)
    k, v = (torch.randn(B, Hkv, S, D, device="cuda", dtype=dtype) for _ in range(2))
    o = torch.empty_like(q)
    runs = {n: base.launcher(lib, q, k, v, o, causal) for n, lib in libs.items()}
    runs["sdpa_cudnn"] = lambda: base.sdpa(q, k, v, causal, "cudnn")
    for n, f in runs.items():  # in this order: ncu's rows follow it (kernel filter by name)
        f()
        torch.cuda.synchronize()
elif __name__ == "__main__":
    sys.argv[0] = str(D64)
    runpy.run_path(str(D64), run_name="__main__")
