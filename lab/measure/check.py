"""Correctness: every variant against an fp32 reference, on fresh random inputs.

For one case (B, H, S, D, causal, scale) the inputs are drawn fresh from a seeded normal
distribution (never zeros), the reference is computed in fp32 from the upcast inputs, and SDPA's
own fp16 error against that reference sets the bar: a variant passes when its max abs error is
at most 2x SDPA's plus 1e-3, with no NaN or Inf, its output buffer having been filled with NaN
before the call (so an element it fails to write cannot pass), the inputs left untouched, and a
second call giving a bit-identical result.

The peers other than SDPA (lab.measure.peers) are judged by the same rule through `peer_as_attn`, on
`peer_grid()`: they take no output buffer, so their own output, every element of it, is copied
into the NaN-filled one; a case a peer cannot take is recorded as unsupported, not as a failure.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass
from typing import Callable, Iterator

from lab.kernels.manifest import SUPPORTED_HEAD_DIMS as HEAD_DIMS  # the grid covers every head dim the kernels take

SEQ_LENS = (1, 17, 64, 127, 128, 129, 512, 1000, 2048)
BATCH_HEADS = ((1, 1), (2, 3), (4, 16))
CUSTOM_SCALE = 0.3  # a scale far from 1/sqrt(D), on a few cases
ERROR_FACTOR, ERROR_SLACK = 2.0, 1e-3


@dataclass(frozen=True)
class Case:
    B: int
    H: int
    S: int
    D: int
    causal: bool
    scale: float | None = None

    @property
    def id(self) -> str:
        s = f"B{self.B}H{self.H}-S{self.S}-D{self.D}-{'causal' if self.causal else 'full'}"
        return s + (f"-scale{self.scale:g}" if self.scale is not None else "")

    @property
    def seed(self) -> int:
        return int(hashlib.sha256(self.id.encode()).hexdigest()[:8], 16)


def grid() -> list[Case]:
    """The full grid: D x S x (B, H) x causal, plus a custom scale on a few cases."""
    cases = [
        Case(B, H, S, D, causal)
        for D in HEAD_DIMS
        for S in SEQ_LENS
        for (B, H) in BATCH_HEADS
        for causal in (False, True)
    ]
    cases += [Case(2, 3, S, D, causal, CUSTOM_SCALE) for D in HEAD_DIMS for S in (17, 129) for causal in (False, True)]
    return cases


def small_grid() -> list[Case]:
    """A quick subset (ragged S, both head dims, causal and not) for smoke runs."""
    return [Case(2, 3, S, D, causal) for D in HEAD_DIMS for S in (1, 17, 129) for causal in (False, True)]


def make_inputs(case: Case, device: str = "cuda"):
    import torch

    gen = torch.Generator(device=device).manual_seed(case.seed)
    shape = (case.B, case.H, case.S, case.D)
    return tuple(torch.randn(shape, generator=gen, device=device, dtype=torch.float32).half() for _ in range(3))


def reference(q, k, v, causal: bool, scale: float | None):
    """Attention in fp32 from the upcast fp16 inputs, one (batch) slice at a time to bound memory."""
    import torch

    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    S = q.shape[2]
    mask = torch.ones(S, S, dtype=torch.bool, device=q.device).tril() if causal else None
    for b in range(q.shape[0]):
        scores = (q[b].float() @ k[b].float().transpose(-1, -2)) * scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        out[b] = torch.softmax(scores, dim=-1) @ v[b].float()
    return out


@dataclass
class CaseResult:
    variant: str
    case: str
    B: int
    H: int
    S: int
    D: int
    causal: bool
    scale: float | None
    max_abs_err: float
    sdpa_max_abs_err: float
    tolerance: float
    finite: bool
    inputs_unchanged: bool
    deterministic: bool
    passed: bool
    error: str = ""
    unsupported: str = ""  # a peer that cannot take the case says why (neither passed nor failed)

    def explain(self) -> str:
        if self.unsupported:
            return f"{self.variant} {self.case}: unsupported ({self.unsupported})"
        if self.error:
            return f"{self.variant} {self.case}: {self.error}"
        why = []
        if not self.finite:
            why.append("NaN/Inf in output")
        if not self.max_abs_err <= self.tolerance:
            why.append(f"max abs err {self.max_abs_err:.3g} > tolerance {self.tolerance:.3g}")
        if not self.inputs_unchanged:
            why.append("inputs modified")
        if not self.deterministic:
            why.append("second call differs")
        return f"{self.variant} {self.case}: " + ("; ".join(why) or "ok")


class ReferenceCache:
    """Inputs, fp32 reference and SDPA's error per case, computed once and shared by variants."""

    def __init__(self, max_entries: int = 4, device: str = "cuda"):
        self._entries: dict[Case, tuple] = {}
        self._max = max_entries
        self.device = device

    def get(self, case: Case):
        if case not in self._entries:
            import torch
            import torch.nn.functional as F

            if len(self._entries) >= self._max:
                self._entries.pop(next(iter(self._entries)))
            q, k, v = make_inputs(case, self.device)
            ref = reference(q, k, v, case.causal, case.scale)
            sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=case.causal, scale=case.scale)
            sdpa_err = (sdpa.float() - ref).abs().max().item()
            self._entries[case] = (q, k, v, ref, sdpa_err)
            del sdpa
            _sync(q)
        return self._entries[case]


def _sync(t) -> None:
    import torch

    if t.is_cuda:
        torch.cuda.synchronize()


def check_case(name: str, attn: Callable, case: Case, refs: ReferenceCache | None = None) -> CaseResult:
    """Run one variant on one case and judge it (never raises for a kernel failure)."""
    import torch

    refs = refs or ReferenceCache()
    q, k, v, ref, sdpa_err = refs.get(case)
    tolerance = ERROR_FACTOR * sdpa_err + ERROR_SLACK
    base = dict(variant=name, case=case.id, B=case.B, H=case.H, S=case.S, D=case.D, causal=case.causal,
                scale=case.scale, sdpa_max_abs_err=sdpa_err, tolerance=tolerance)
    snapshot = [t.clone() for t in (q, k, v)]
    try:
        out1 = torch.full_like(q, float("nan"))
        attn(q, k, v, is_causal=case.causal, scale=case.scale, out=out1)
        out2 = torch.full_like(q, float("nan"))
        attn(q, k, v, is_causal=case.causal, scale=case.scale, out=out2)
        _sync(q)
    except Unsupported as exc:
        return CaseResult(**base, max_abs_err=float("nan"), finite=False, inputs_unchanged=True,
                          deterministic=False, passed=False, unsupported=str(exc))
    except Exception as exc:  # noqa: BLE001 - a failing kernel is a result, not a crash
        _restore((q, k, v), snapshot)
        return CaseResult(**base, max_abs_err=float("nan"), finite=False, inputs_unchanged=False,
                          deterministic=False, passed=False, error=f"{type(exc).__name__}: {exc}")
    finite = bool(torch.isfinite(out1).all().item())
    err = (out1.float() - ref).abs().max().item() if finite else float("inf")
    unchanged = all(torch.equal(a, b) for a, b in zip(snapshot, (q, k, v)))
    if not unchanged:
        _restore((q, k, v), snapshot)
    deterministic = _bits_equal(out1, out2)
    passed = finite and err <= tolerance and unchanged and deterministic
    return CaseResult(**base, max_abs_err=err, finite=finite, inputs_unchanged=unchanged,
                      deterministic=deterministic, passed=passed)


def _restore(inputs, snapshot) -> None:
    """Put back inputs a kernel wrote: the cached inputs are shared by every kernel checked on the
    case after it, which would otherwise be judged on other inputs than the reference's."""
    for t, s in zip(inputs, snapshot):
        t.copy_(s)


def _bits_equal(a, b) -> bool:
    """Bit-identical (a NaN where the other call has the same NaN counts as equal: a deterministic
    kernel that writes NaN fails as non-finite, not as non-deterministic)."""
    import torch

    return a.shape == b.shape and bool(torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8)))


def run_grid(kernels: dict[str, Callable], cases: list[Case] | None = None,
             progress: Callable[[str], None] | None = None, device: str = "cuda") -> Iterator[CaseResult]:
    """Check every kernel (a variant, or a peer through peer_as_attn) on every case; yields results
    as they come (case-major, so each reference is computed once)."""
    refs = ReferenceCache(device=device)
    cases = cases if cases is not None else grid()
    for i, case in enumerate(cases, 1):
        for name, attn in kernels.items():
            result = check_case(name, attn, case, refs)
            if progress and not result.passed and not result.unsupported:
                progress("  FAIL " + result.explain())
            yield result
        if progress and i % 20 == 0:
            progress(f"  checked {i}/{len(cases)} cases")


class Unsupported(Exception):
    """Raised by an adapter for a case its implementation cannot take (recorded, not a failure)."""


def peer_as_attn(peer) -> Callable:
    """A peer (lab.measure.peers) with the variants' interface, `attn(q, k, v, is_causal=, scale=, out=)`,
    so that check_case and run_grid judge it by the same rule. A peer takes no `out`: its own
    output is converted to (B, H, S, D) and copied into the NaN-filled `out` (the same elements,
    all of them, so NaN/Inf and the error are checked on every element); a shape mismatch is an
    error rather than a broadcast. A shape the peer cannot take raises Unsupported."""

    def attn(q, k, v, is_causal: bool = False, scale: float | None = None, out=None):
        if why := peer.unsupported_reason(q, k, v, is_causal, scale):
            raise Unsupported(why)
        with peer.context():
            result = peer.output_bhsd(peer.bind(q, k, v, is_causal, scale)())
        if tuple(result.shape) != tuple(q.shape):
            raise ValueError(f"{peer.name} returned shape {tuple(result.shape)}, expected {tuple(q.shape)}")
        if out is None:
            return result
        out.copy_(result)
        return out

    return attn


def peer_grid() -> list[Case]:
    """The peers' cases: the quick grid (B = 2, ragged S, both D, causal and not), one-request
    cases (B = 1, for peers wired for one request) and a custom scale. Smaller than the variants'
    grid because each new shape costs flex_attention a compilation; the peers are libraries, and
    what is checked here is this harness's wiring of them (layouts, causal, scale)."""
    return (small_grid() + [Case(1, 3, 129, D, causal) for D in HEAD_DIMS for causal in (False, True)]
            + [Case(2, 3, 129, 64, True, CUSTOM_SCALE)])


def as_records(results) -> list[dict]:
    return [asdict(r) for r in results]
