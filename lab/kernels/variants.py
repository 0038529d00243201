"""The public face of the kernel ladder: its steps (the manifest's names, in order), input
validation, and a callable per step with SDPA's semantics.

    >>> from lab import variants
    >>> variants.names()                        # every step of kernels/variants/manifest.toml
    ['baseline', 'restrict', 'coalesced', ..., 'ftz_exp2', 'consumer_copies', ..., 'persistent', ...]
    >>> attn = variants.load("wmma")            # builds (or reuses the cached build)
    >>> out = attn(q, k, v, is_causal=True)     # like F.scaled_dot_product_attention

Each variant is a plain CUDA shared library exporting a C entry point (see
kernels/include/fa/common.cuh); it is called through ctypes on torch's current stream, so no
torch headers are compiled and the launch is capturable in a CUDA graph.
"""

from __future__ import annotations

from lab.kernels import build
from lab.kernels.attention import KernelAttention, check_inputs, cuda_error_name  # noqa: F401  (the public API)
from lab.kernels.manifest import (KERNELS_DIR, MANIFEST_PATH, MAX_GRID_YZ, METRICS, PORTABLE, PREFILL, REPO,  # noqa: F401
                                  SUPPORTED_HEAD_DIMS, VARIANTS_DIR, Variant, branch, branch_ends, branch_order,
                                  branches, get, judged_shape, lineage, manifest, names)


def load(name: str, **build_options) -> KernelAttention:
    """Build `name` if its cached build is missing or stale, load it, and return its callable."""
    result = build.build_variant(get(name), **build_options)
    if not result.ok:
        raise RuntimeError(f"variant {name!r} failed to build:\n{result.log}")
    return result.load()
