"""Throughput from a latency: attention's FLOP count (the one home for it), TFLOP/s and effective bandwidth."""

from __future__ import annotations


def attention_flops(B: int, H: int, S: int, D: int, causal: bool) -> float:
    """The FLOP count of an attention forward pass, the study's one: 4*B*H*S*S*D (two matmuls,
    QK^T and PV, 2 FLOPs per MAC), halved for causal masking since only the lower triangle is
    computed."""
    flops = 4.0 * B * H * S * S * D
    return flops / 2.0 if causal else flops


def tflops(B: int, H: int, S: int, D: int, causal: bool, median_us: float) -> float:
    """Attention forward throughput in TFLOP/s (attention_flops over the latency)."""
    if median_us <= 0:
        raise ValueError("median_us must be positive")
    return attention_flops(B, H, S, D, causal) / (median_us * 1e-6) / 1e12


def effective_gbps(
    B: int, H: int, S: int, D: int, median_us: float, bytes_per_elem: int = 2, H_kv: int | None = None
) -> float:
    """Effective memory bandwidth in GB/s (1e9 bytes/s).

    Counts the compulsory traffic only: read Q and write O (B*H*S*D elements each), read K and V
    (B*H_kv*S*D each; H_kv = H by default), i.e. 2*B*(H + H_kv)*S*D*bytes_per_elem bytes (fp16/bf16
    by default): grouped K/V heads are read once, whatever number of query heads share them.
    """
    if median_us <= 0:
        raise ValueError("median_us must be positive")
    H_kv = H if H_kv is None else H_kv
    nbytes = 2.0 * B * (H + H_kv) * S * D * bytes_per_elem
    return nbytes / (median_us * 1e-6) / 1e9
