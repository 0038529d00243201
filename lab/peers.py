"""The peers: PyTorch scaled_dot_product_attention under each backend the device offers.

A peer is used like a variant: `peer.bind(q, k, v, causal, scale)` returns a launch closure,
and timing happens inside `peer.context()`, so backend selection (a context manager that costs
tens of microseconds of host time) is never inside a timed region.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

BACKENDS = ("flash", "efficient", "cudnn", "default", "math")


@dataclass
class SdpaPeer:
    backend: str  # one of BACKENDS; "default" lets SDPA choose

    @property
    def name(self) -> str:
        return f"sdpa_{self.backend}"

    def context(self):
        if self.backend == "default":
            return contextlib.nullcontext()
        from torch.nn.attention import SDPBackend, sdpa_kernel

        enum = {
            "flash": SDPBackend.FLASH_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION,
            "cudnn": SDPBackend.CUDNN_ATTENTION,
            "math": SDPBackend.MATH,
        }[self.backend]
        return sdpa_kernel([enum])

    def bind(self, q, k, v, causal: bool, scale: float | None):
        import torch.nn.functional as F

        def launch():
            F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)

        return launch

    def unsupported_reason(self, q, k, v, causal: bool, scale: float | None) -> str | None:
        """None if this backend runs the shape, else why not (recorded, never dropped silently)."""
        import torch

        try:
            with self.context():
                self.bind(q, k, v, causal, scale)()
            torch.cuda.synchronize()
        except RuntimeError as exc:
            return str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        return None


def peers(backends=("flash", "efficient", "cudnn", "default")) -> list[SdpaPeer]:
    return [SdpaPeer(b) for b in backends]
