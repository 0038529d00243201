"""Ablation-study pipeline for hand-written FlashAttention forward kernels.

One module per concern: `variants` (the ladder and its callables), `build` (nvcc through
torch.utils.cpp_extension + ninja, ptxas reports), `check` (the fp32 reference and the
correctness grid), `stats` (numpy/scipy only).
"""
