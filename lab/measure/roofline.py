"""The roofline: a profiled launch's TFLOP/s and arithmetic intensity against the GPU in hand's measured
ceilings (its fp16 tensor-core matmul rate and device-memory copy bandwidth). The FLOP count is
lab.measure.stats.attention_flops, the timing's own."""

from __future__ import annotations

from lab.measure.ncu_metrics import plain_number
from lab.measure.stats import tflops


def achieved_tflops(B: int, H: int, S: int, D: int, causal: bool, duration_us: float | None) -> float | None:
    if plain_number(duration_us) is None or duration_us <= 0:
        return None
    return tflops(B, H, S, D, causal, duration_us)


def arithmetic_intensity(flops: float | None, dram_bytes: float | None) -> float | None:
    """FLOPs per DRAM byte (None where no bytes were measured)."""
    if plain_number(flops) is None or plain_number(dram_bytes) is None or dram_bytes <= 0:
        return None
    return flops / dram_bytes


def attainable_tflops(intensity: float | None, ceilings: dict) -> float | None:
    """The roofline: min(matrix peak, intensity x memory bandwidth), in TFLOP/s."""
    if plain_number(intensity) is None:
        return None
    return min(ceilings["tensor_tflops"], intensity * ceilings["dram_gbps"] * 1e9 / 1e12)


def measure_ceilings(matmul_n: int = 8192, copy_bytes: int = 1 << 30, reps: int = 20) -> dict:
    """The GPU in hand's fp16 tensor-core matmul rate and device-memory bandwidth (GPU only, ~2 s).

    tensor_tflops: torch.matmul of two N x N fp16 matrices, 2*N^3 FLOPs a launch.
    dram_gbps: a device-to-device copy of copy_bytes, counting bytes read plus written (1e9 B/s).
    Each is the best of `reps` launches timed one by one with CUDA events after warm-up, clocks
    left as they are (as in the timings they are compared with).
    """
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("measure_ceilings needs a CUDA GPU")

    def best_ms(fn) -> float:
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
        for start, end in events:
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return min(s.elapsed_time(e) for s, e in events)

    a = torch.randn(matmul_n, matmul_n, device="cuda", dtype=torch.float16)
    b = torch.randn(matmul_n, matmul_n, device="cuda", dtype=torch.float16)
    c = torch.empty_like(a)
    mm_ms = best_ms(lambda: torch.matmul(a, b, out=c))
    del a, b, c
    src = torch.empty(copy_bytes, device="cuda", dtype=torch.uint8).fill_(1)
    dst = torch.empty_like(src)
    cp_ms = best_ms(lambda: dst.copy_(src))
    del src, dst
    torch.cuda.empty_cache()
    tensor_tflops = 2.0 * matmul_n**3 / (mm_ms * 1e-3) / 1e12
    dram_gbps = 2.0 * copy_bytes / (cp_ms * 1e-3) / 1e9
    return {
        "device": torch.cuda.get_device_name(),
        "tensor_tflops": tensor_tflops,
        "dram_gbps": dram_gbps,
        "ridge_flop_per_byte": tensor_tflops * 1e12 / (dram_gbps * 1e9),
        "matmul_n": matmul_n,
        "matmul_us": mm_ms * 1e3,
        "copy_bytes": copy_bytes,
        "copy_us": cp_ms * 1e3,
    }
