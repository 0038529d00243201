"""A built decode step (issue 50) as a callable, in lab.kernels.decode's layouts:

    >>> from lab import variants
    >>> decode = variants.load("decode_group_cta")
    >>> out = decode(q, k_cache, v_cache, cache_lens=lens)                      # contiguous caches
    >>> out = decode(q, k_pages, v_pages, cache_lens=lens, block_table=table)   # paged

The library's C entry point is fa_decode (kernels/include/fa/decode.cuh); it is called through ctypes on
torch's current stream, like the prefill steps (lab.kernels.attention), so a launch can be captured in a
CUDA graph. A step that splits the keys across CTAs asks for a workspace (fa_decode_workspace_bytes),
which the call allocates from torch's caching allocator.
"""

from __future__ import annotations

import ctypes
import math

from lab.kernels.attention import TORCH_DTYPE_CODES, check_scale, cuda_error_name, library_inputs
from lab.kernels.decode import check_inputs


class DecodeAttention:
    """A built decode step, callable as `(q, k_cache, v_cache, cache_lens, block_table=None, scale=None, out=None)`."""

    def __init__(self, name: str, library: ctypes.CDLL, build_key: str, build_info: dict | None = None):
        self.name = name
        self.build_key = build_key
        self.build_info = build_info or {}
        self.dtypes, self.kv_heads = library_inputs(library)
        self._decode = library.fa_decode
        self._decode.restype = ctypes.c_int
        self._decode.argtypes = ([ctypes.c_void_p] * 6 + [ctypes.c_int] * 8 + [ctypes.c_float, ctypes.c_int,
                                 ctypes.c_void_p, ctypes.c_longlong, ctypes.c_void_p])
        self._workspace_bytes = library.fa_decode_workspace_bytes
        self._workspace_bytes.restype = ctypes.c_longlong
        self._workspace_bytes.argtypes = [ctypes.c_int] * 6

    def __repr__(self) -> str:
        return f"DecodeAttention({self.name!r}, build_key={self.build_key[:12]!r})"

    def __call__(self, q, k_cache, v_cache, cache_lens, block_table=None, scale: float | None = None, out=None):
        """Validate (lab.kernels.decode.check_inputs: reads the lengths and block table on the host),
        then launch; returns out, (B, q_len, H, D) like q."""
        import torch

        check_inputs(q, k_cache, v_cache, cache_lens, block_table, out)
        tensors = {"q": q, "k_cache": k_cache, "v_cache": v_cache, "cache_lens": cache_lens,
                   "block_table": block_table}
        if any(t is not None and not t.is_cuda for t in tensors.values()):
            raise ValueError("q, k_cache, v_cache, cache_lens and block_table must be CUDA tensors")
        if len({t.device for t in tensors.values() if t is not None}) > 1:
            raise ValueError("q, k_cache, v_cache, cache_lens and block_table must be on one device")
        if block_table is not None and not block_table.is_contiguous():
            raise ValueError("block_table must be contiguous")
        for label in ("q", "k_cache", "v_cache"):
            if tensors[label].data_ptr() % 16:
                raise ValueError(f"{label} must start on a 16-byte boundary (the kernel loads 16-byte vectors)")
        if q.shape[-1] not in (64, 128):
            raise ValueError(f"head dim D must be 64 or 128, got {q.shape[-1]}")
        check_scale(scale)
        if out is None:
            out = torch.empty_like(q)
        elif not out.is_contiguous() or out.device != q.device or out.data_ptr() % 16:
            raise ValueError("out must be contiguous, on q's device, and start on a 16-byte boundary")
        self.launch(q, k_cache, v_cache, cache_lens, block_table, out, scale)
        return out

    def workspace_bytes(self, q, k_cache, block_table=None) -> int:
        B, q_len, H, D = q.shape
        capacity = k_cache.shape[1] * (block_table.shape[1] if block_table is not None else 1)
        return int(self._workspace_bytes(B, q_len, H, k_cache.shape[2], D, capacity))

    def launch(self, q, k_cache, v_cache, cache_lens, block_table, out, scale: float | None = None,
               workspace=None) -> None:
        """Enqueue on the current stream without validating (timing loops). `workspace`: a uint8 CUDA
        tensor of at least workspace_bytes(); None allocates one for this call."""
        import torch

        B, q_len, H, D = q.shape
        scale = 1.0 / math.sqrt(D) if scale is None else float(scale)
        need = self.workspace_bytes(q, k_cache, block_table)
        if need < 0:
            raise ValueError(f"variant {self.name!r} takes head dims 64 and 128, not {D}")
        if workspace is None and need:
            workspace = torch.empty(need, dtype=torch.uint8, device=q.device)
        stream = torch.cuda.current_stream(q.device).cuda_stream
        err = self._decode(q.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(), out.data_ptr(),
                           cache_lens.data_ptr(), block_table.data_ptr() if block_table is not None else None,
                           B, q_len, H, k_cache.shape[2], D, k_cache.shape[0], k_cache.shape[1],
                           block_table.shape[1] if block_table is not None else 0, scale,
                           TORCH_DTYPE_CODES.get(str(q.dtype), -1),
                           workspace.data_ptr() if workspace is not None else None,
                           workspace.numel() if workspace is not None else 0, stream)
        if err:
            raise RuntimeError(f"variant {self.name!r}: decode launch failed with {cuda_error_name(err)} ({err})")
