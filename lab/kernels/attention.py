"""A built variant as a callable with SDPA's semantics, and the input validation it applies."""

from __future__ import annotations

import ctypes
import math

from lab.kernels.manifest import MAX_GRID_YZ, SUPPORTED_HEAD_DIMS


def check_inputs(q, k, v, scale=None) -> None:
    """Raise ValueError naming the violated constraint, if the inputs are not supported.

    Supported: torch fp16 CUDA tensors, 4-D (B, H, S, D), contiguous, 16-byte aligned, Q, K and V
    of one shape (self-attention), D in {64, 128}, S >= 1, B and H at most 65535, and a finite
    positive scale if one is given. The device is checked last so the other rules can be
    exercised on a machine without a GPU.
    """
    import torch

    for label, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{label} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"{label} must be 4-D (B, H, S, D), got {t.dim()}-D shape {tuple(t.shape)}")
        if t.dtype != torch.float16:
            raise ValueError(f"{label} must be float16, got {t.dtype}")
    if not (q.shape == k.shape == v.shape):
        raise ValueError(
            "q, k and v must have the same shape (B, H, S, D) (self-attention), got "
            f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    B, H, S, D = q.shape
    if D not in SUPPORTED_HEAD_DIMS:
        raise ValueError(f"head dim D must be one of {SUPPORTED_HEAD_DIMS}, got {D}")
    if S < 1 or B < 1 or H < 1:
        raise ValueError(f"B, H and S must be at least 1, got B={B}, H={H}, S={S}")
    if B > MAX_GRID_YZ or H > MAX_GRID_YZ:
        raise ValueError(f"B and H must be at most {MAX_GRID_YZ}, got B={B}, H={H}")
    for label, t in (("q", q), ("k", k), ("v", v)):
        if not t.is_contiguous():
            raise ValueError(f"{label} must be contiguous")
        if t.data_ptr() % 16:
            raise ValueError(f"{label} must start on a 16-byte boundary (kernels load 16-byte vectors)")
    if scale is not None and not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a finite positive number or None, got {scale!r}")
    if not (q.is_cuda and k.is_cuda and v.is_cuda):
        raise ValueError("q, k and v must be CUDA tensors (got a CPU tensor)")
    if not (q.device == k.device == v.device):
        raise ValueError(f"q, k and v must be on one device, got {q.device}, {k.device}, {v.device}")


class KernelAttention:
    """A built variant, callable like `scaled_dot_product_attention(q, k, v, is_causal, scale)`."""

    def __init__(self, name: str, library: ctypes.CDLL, build_key: str, build_info: dict | None = None):
        self.name = name
        self.build_key = build_key
        self.build_info = build_info or {}
        self._forward = library.fa_forward
        self._forward.restype = ctypes.c_int
        self._forward.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 4 + [
            ctypes.c_float,
            ctypes.c_int,
            ctypes.c_void_p,
        ]

    def __repr__(self) -> str:
        return f"KernelAttention({self.name!r}, build_key={self.build_key[:12]!r})"

    def __call__(self, q, k, v, is_causal: bool = False, scale: float | None = None, out=None):
        check_inputs(q, k, v, scale)
        import torch

        if out is None:
            out = torch.empty_like(q)
        elif out.shape != q.shape or out.dtype != q.dtype or not out.is_contiguous() or out.device != q.device:
            raise ValueError("out must be a contiguous float16 tensor of q's shape on q's device")
        self.launch(q, k, v, out, is_causal, scale)
        return out

    def launch(self, q, k, v, out, is_causal: bool = False, scale: float | None = None) -> None:
        """Enqueue the kernel on the current stream without validating (for timing loops)."""
        import torch

        B, H, S, D = q.shape
        scale = 1.0 / math.sqrt(D) if scale is None else float(scale)
        stream = torch.cuda.current_stream(q.device).cuda_stream
        err = self._forward(
            q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), B, H, S, D, scale, int(bool(is_causal)), stream
        )
        if err:
            raise RuntimeError(f"variant {self.name!r}: kernel launch failed with {cuda_error_name(err)} ({err})")


def cuda_error_name(code: int) -> str:
    try:
        import torch

        lib = ctypes.CDLL(None)
        fn = getattr(lib, "cudaGetErrorName", None)
        if fn is None:
            return f"cudaError {code}"
        fn.restype = ctypes.c_char_p
        return fn(code).decode()
    except Exception:  # noqa: BLE001 - only used to label an error that is raised anyway
        return f"cudaError {code}"
