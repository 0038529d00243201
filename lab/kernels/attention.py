"""A built variant as a callable with SDPA's semantics, and the input validation it applies."""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

from lab.kernels.manifest import MAX_GRID_YZ, SUPPORTED_HEAD_DIMS
from lab.kernels.shape import DEFAULT_DTYPE, DTYPES, not_taken


# The C ABI of the inputs real models run (issue 22). Every variant exports fa_forward (fp16, H_kv =
# H); one that takes more also exports fa_forward_ex(..., int H_kv, ..., int dtype, stream) with
# these dtype codes, fa_dtypes() (a bitmask of DTYPE_BITS) and fa_grouped_kv() (1: any H_kv that
# divides H). kernels/include/fa/common.cuh holds the C side.
DTYPE_CODES = {"fp16": 0, "bf16": 1}
DTYPE_BITS = {"fp16": 1, "bf16": 2}
# str(tensor.dtype) -> its dtype code: a launch's lookup, no parsing (the prefill and decode callables')
TORCH_DTYPE_CODES = {f"torch.{DTYPES[d]}": code for d, code in DTYPE_CODES.items()}


@dataclass(frozen=True)
class Takes:
    """What an implementation takes beyond the shape rules every kernel shares: its element types
    and K/V layout (lab.kernels.shape.KV_LAYOUTS), and how an error names it and where it says so."""

    what: str = "the kernels"
    dtypes: tuple[str, ...] = tuple(DTYPES)
    kv_heads: str = "grouped"
    source: str = "its manifest"

    def not_taken(self, dtype, H: int, H_kv: int) -> str:
        return not_taken(self.what, self.dtypes, self.kv_heads, dtype, H, H_kv, self.source)


def check_inputs(q, k, v, scale=None, takes: Takes | None = None) -> None:
    """Raise ValueError naming the violated constraint, if the inputs are not supported.

    Supported: torch CUDA tensors, 4-D, contiguous, 16-byte aligned, all three float16 or all three
    bfloat16; q (B, H, S, D) and k, v of one shape (B, H_kv, S, D) with q's B, S and D
    (self-attention) and H_kv dividing H (grouped-query attention: query head h reads K/V head
    h // (H / H_kv), SDPA's enable_gqa; H_kv = 1 is multi-query); D in {64, 128}, S >= 1, B and H
    at most 65535, and a finite positive scale if one is given. `takes`: what the implementation
    takes of those (a step declaring fp16 only, or H_kv = H only: its manifest's dtypes and
    kv_heads); None: everything above. The device is checked last so the other rules can be
    exercised on a machine without a GPU.
    """
    import torch

    allowed = [getattr(torch, DTYPES[d]) for d in DTYPES]
    for label, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{label} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"{label} must be 4-D (B, H, S, D), got {t.dim()}-D shape {tuple(t.shape)}")
        if t.dtype not in allowed:
            raise ValueError(f"{label} must be float16 or bfloat16, got {t.dtype}")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"mixed dtypes: q, k and v must share one element type, got q {q.dtype}, k {k.dtype}, "
                         f"v {v.dtype}")
    if k.shape != v.shape:
        heads = (f": their K/V head counts differ ({k.shape[1]} and {v.shape[1]})" if k.shape[1] != v.shape[1]
                 else "")
        raise ValueError(f"k and v must have the same shape (B, H_kv, S, D), got k {tuple(k.shape)} and "
                         f"v {tuple(v.shape)}{heads}")
    B, H, S, D = q.shape
    H_kv = k.shape[1]
    if (k.shape[0], k.shape[2], k.shape[3]) != (B, S, D):
        raise ValueError(f"k and v must have q's B, S and D (self-attention: as many keys as queries), got q "
                         f"{tuple(q.shape)}, k and v {tuple(k.shape)}")
    if D not in SUPPORTED_HEAD_DIMS:
        raise ValueError(f"head dim D must be one of {SUPPORTED_HEAD_DIMS}, got {D}")
    if S < 1 or B < 1 or H < 1 or H_kv < 1:
        raise ValueError(f"B, H, H_kv and S must be at least 1, got B={B}, H={H}, H_kv={H_kv}, S={S}")
    if H % H_kv:
        raise ValueError(f"the K/V head count H_kv = {H_kv} (k's and v's dim 1) must divide the query heads "
                         f"H = {H} (q's dim 1)")
    if B > MAX_GRID_YZ or H > MAX_GRID_YZ:
        raise ValueError(f"B and H must be at most {MAX_GRID_YZ}, got B={B}, H={H}")
    if takes is not None and (why := takes.not_taken(q.dtype, H, H_kv)):
        raise ValueError(why)
    for label, t in (("q", q), ("k", k), ("v", v)):
        if not t.is_contiguous():
            raise ValueError(f"{label} must be contiguous")
        if t.data_ptr() % 16:
            raise ValueError(f"{label} must start on a 16-byte boundary (kernels load 16-byte vectors)")
    check_scale(scale)
    if not (q.is_cuda and k.is_cuda and v.is_cuda):
        raise ValueError("q, k and v must be CUDA tensors (got a CPU tensor)")
    if not (q.device == k.device == v.device):
        raise ValueError(f"q, k and v must be on one device, got {q.device}, {k.device}, {v.device}")


def check_scale(scale) -> None:
    """ValueError unless `scale` is None or a finite positive number (what every callable takes)."""
    if scale is not None and not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a finite positive number or None, got {scale!r}")


def library_inputs(library) -> tuple[tuple[str, ...], str]:
    """(dtypes, kv_heads) a loaded library says it takes: fp16 and "same" for one without
    fa_forward_ex (every step before issue 22), else fa_dtypes()'s bits and fa_grouped_kv().
    RuntimeError where the exports contradict each other (a bit the ABI does not define, fp16
    missing although fa_forward takes it, or fa_dtypes/fa_grouped_kv claiming more than fp16 with
    H_kv = H without the fa_forward_ex that would take it)."""
    # The entry that takes more than fp16 with H_kv = H: a prefill step's fa_forward_ex, or a decode
    # step's fa_decode (lab.kernels.decode_attention), which always takes the problem's model inputs.
    ex = getattr(library, "fa_forward_ex", None) or getattr(library, "fa_decode", None)
    mask_fn, grouped_fn = getattr(library, "fa_dtypes", None), getattr(library, "fa_grouped_kv", None)
    if ex is None:
        claims = (mask_fn is not None and mask_fn() != DTYPE_BITS["fp16"]) or (grouped_fn is not None and grouped_fn())
        if claims:
            raise RuntimeError("the library's fa_dtypes/fa_grouped_kv claim more than fp16 with H_kv = H, but it "
                               "exports no fa_forward_ex to take it")
        return (DEFAULT_DTYPE,), "same"
    if mask_fn is None or grouped_fn is None:
        raise RuntimeError("the library exports fa_forward_ex without "
                           + " and ".join(n for n, f in (("fa_dtypes", mask_fn), ("fa_grouped_kv", grouped_fn))
                                          if f is None))
    mask = int(mask_fn())
    if mask & ~sum(DTYPE_BITS.values()) or not mask & DTYPE_BITS[DEFAULT_DTYPE]:
        raise RuntimeError(f"the library's fa_dtypes() = {mask}: bits of "
                           + ", ".join(f"{b} = {d}" for d, b in DTYPE_BITS.items()) + ", fp16 among them")
    return tuple(d for d, bit in DTYPE_BITS.items() if mask & bit), "grouped" if int(grouped_fn()) else "same"


def inputs_mismatch(name: str, library: tuple, declared: tuple) -> str:
    """'' where a library's (dtypes, kv_heads) agree with the manifest's declaration, else the
    error naming both."""
    if (set(library[0]), library[1]) == (set(declared[0]), declared[1]):  # the order dtypes are listed in is no matter
        return ""
    return (f"variant {name!r}: the library takes dtypes {list(library[0])}, kv_heads \"{library[1]}\" "
            f"(fa_dtypes/fa_grouped_kv) but the manifest declares dtypes {list(declared[0])}, kv_heads "
            f"\"{declared[1]}\"")


class KernelAttention:
    """A built variant, callable like `scaled_dot_product_attention(q, k, v, is_causal, scale)` (and,
    where its library takes them, with bf16 and with fewer K/V heads than query heads, as SDPA's
    `enable_gqa=True`)."""

    # A library without fa_forward_ex (every step before issue 22): fp16, H_kv = H.
    dtypes: tuple[str, ...] = (DEFAULT_DTYPE,)
    kv_heads: str = "same"
    _forward_ex = None

    def __init__(self, name: str, library: ctypes.CDLL, build_key: str, build_info: dict | None = None,
                 declared: tuple | None = None):
        """`declared`: the manifest's (dtypes, kv_heads) for the step; a library that says otherwise
        is refused (RuntimeError naming both)."""
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
        self.dtypes, self.kv_heads = library_inputs(library)
        if declared is not None and (why := inputs_mismatch(name, (self.dtypes, self.kv_heads), declared)):
            raise RuntimeError(why)
        if getattr(library, "fa_forward_ex", None) is not None:
            self._forward_ex = library.fa_forward_ex
            self._forward_ex.restype = ctypes.c_int
            self._forward_ex.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 5 + [
                ctypes.c_float, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]

    def __repr__(self) -> str:
        return f"KernelAttention({self.name!r}, build_key={self.build_key[:12]!r})"

    @property
    def takes(self) -> Takes:
        return Takes(f"variant {self.name!r}", tuple(self.dtypes), self.kv_heads)

    def not_taken(self, shape) -> str:
        """Why this variant cannot take `shape`'s element type or K/V heads (a lab.kernels.shape.Shape); ''."""
        return self.takes.not_taken(shape.dtype, shape.H, shape.H_kv)

    def __call__(self, q, k, v, is_causal: bool = False, scale: float | None = None, out=None):
        check_inputs(q, k, v, scale, takes=self.takes)
        import torch

        if out is None:
            out = torch.empty_like(q)
        elif out.shape != q.shape or out.dtype != q.dtype or not out.is_contiguous() or out.device != q.device:
            raise ValueError(f"out must be a contiguous tensor of q's shape {tuple(q.shape)}, dtype ({q.dtype}) and "
                             f"device ({q.device}), got {tuple(out.shape)} {out.dtype} on {out.device}")
        self.launch(q, k, v, out, is_causal, scale)
        return out

    def launch(self, q, k, v, out, is_causal: bool = False, scale: float | None = None) -> None:
        """Enqueue the kernel on the current stream without validating (for timing loops): through
        fa_forward_ex where the library has it (any dtype and K/V head count it takes), else
        fa_forward (fp16, H_kv = H)."""
        import torch

        B, H, S, D = q.shape
        scale = 1.0 / math.sqrt(D) if scale is None else float(scale)
        stream = torch.cuda.current_stream(q.device).cuda_stream
        if self._forward_ex is not None:
            err = self._forward_ex(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), B, H, k.shape[1], S, D,
                                   scale, int(bool(is_causal)), TORCH_DTYPE_CODES.get(str(q.dtype), -1), stream)
        else:
            err = self._forward(
                q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), B, H, S, D, scale, int(bool(is_causal)),
                stream
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
