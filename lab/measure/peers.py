"""The peers: the attention implementations a user would pick instead of the hand-written kernels.

- `sdpa_<backend>`: PyTorch's scaled_dot_product_attention under one backend (flash, efficient,
  cudnn, default = SDPA's own choice, math).
- `flex_attention`: torch.nn.attention.flex_attention under torch.compile (part of torch).
- external kernels named in `EXTERNAL` (FlashAttention-3's Hopper kernels through lab.measure.fa3,
  flash-attn-4's CuTe kernels, FlashInfer), used where their package imports (and its probe passes);
  where it does not, the peer is recorded as absent with the reason. Each records where its kernels
  come from (`source`: package and version, or library and hash) in peers.json.

A peer is used like a variant: `peer.bind(q, k, v, causal, scale)` does the host-side work (layout
conversion, block masks, compilation caches) and returns a launch closure, and timing happens
inside `peer.context()`, so backend selection (a context manager that costs tens of microseconds
of host time) is never inside a timed region. The closure returns the library's own output;
`peer.output_bhsd(raw)` turns it into (B, H, S, D) for the correctness check only.
`peer.unsupported_reason(...)` runs one launch (compiling where the peer compiles) and says why
the peer cannot run a shape, or None.

The inputs real models run: k and v may have fewer heads than q (H_kv dividing H; grouped-query
attention, H_kv = 1 multi-query) and all three may be bf16. SDPA and flex_attention are then called
with `enable_gqa=True` (query head h reads K/V head h // (H / H_kv)); the external kernels take
such K/V as they are (their own GQA support). A backend or library that refuses a case says so
through unsupported_reason, and is left out of that case as for any other shape.
"""

from __future__ import annotations

import contextlib
import importlib
from dataclasses import dataclass, field
from typing import Callable

BACKENDS = ("flash", "efficient", "cudnn", "default", "math")
DEFAULT_BACKENDS = ("flash", "efficient", "cudnn", "default")
FLEX = "flex_attention"
# SDPA left to choose: it runs the kernels of one of the backends above, so where that backend is timed too, the
# faster of the two timings would be one kernel's luckier draw, not another peer (see contenders)
DISPATCHER = "sdpa_default"


def first_line(exc: BaseException, limit: int = 300) -> str:
    """'TypeName: first line of the message', short enough for a table cell."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:limit]}" if text else type(exc).__name__


class Peer:
    """What every peer shares: no context, output already (B, H, S, D), and the support probe."""

    name: str

    def context(self):
        return contextlib.nullcontext()

    def bind(self, q, k, v, causal: bool, scale: float | None) -> Callable:
        raise NotImplementedError

    def output_bhsd(self, raw):
        return raw

    def unsupported_reason(self, q, *call) -> str | None:
        """None if this peer runs the call (`bind`'s arguments: q, k, v, causal, scale for prefill; one
        launch, compiling where the peer compiles), else why not, in one line (recorded, never dropped
        silently)."""
        import torch

        try:
            with self.context():
                self.bind(q, *call)()
            if q.is_cuda:
                torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - a peer that cannot run a shape is a result
            return first_line(exc)
        return None


@dataclass
class SdpaPeer(Peer):
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

        kw = gqa(q, k)

        def launch():
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, **kw)

        return launch


def gqa(q, k) -> dict:
    """{"enable_gqa": True} where k has fewer heads than q (SDPA's and flex_attention's argument for
    grouped-query attention), else {}: a multi-head call stays the call it always was (and torch
    before 2.5, which has no such argument, still runs it)."""
    return {"enable_gqa": True} if k.shape[1] != q.shape[1] else {}


def _causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx  # SDPA's is_causal for S_q == S_kv (top-left aligned)


# Every (S, D, causal, dtype, heads) is one more compiled graph, and a run checks and times dozens:
# dynamo's default limit (8) would quietly fall back to eager flex_attention (a slow reference
# path) after the 8th. The limit is raised, and hitting it raises instead of falling back.
FLEX_RECOMPILE_LIMIT = 1024


@dataclass
class FlexAttentionPeer(Peer):
    """flex_attention compiled once per process (dynamic=False: one specialised kernel per shape).
    The block mask (causal, or flex's own all-visible noop_mask: full blocks, no mask work in the
    kernel) is built in bind, outside timing, and cached per
    (S, device, causal); bind-time warm-up is left to unsupported_reason, which compiles."""

    name: str = FLEX
    _masks: dict = field(default_factory=dict, repr=False)
    _compiled = None  # class-wide: one torch.compile wrapper, its graphs cached by dynamo

    @classmethod
    def compiled(cls):
        if cls._compiled is None:
            import torch
            import torch._dynamo.config as dynamo_config
            from torch.nn.attention.flex_attention import flex_attention

            # (older torch names the same settings cache_size_limit and fail_on_cache_limit_hit)
            for name, at_least in (("recompile_limit", FLEX_RECOMPILE_LIMIT),
                                   ("cache_size_limit", FLEX_RECOMPILE_LIMIT),
                                   ("accumulated_recompile_limit", 4 * FLEX_RECOMPILE_LIMIT),
                                   ("accumulated_cache_size_limit", 4 * FLEX_RECOMPILE_LIMIT)):
                if hasattr(dynamo_config, name):
                    setattr(dynamo_config, name, max(getattr(dynamo_config, name), at_least))
            for name in ("fail_on_recompile_limit_hit", "fail_on_cache_limit_hit"):
                if hasattr(dynamo_config, name):
                    setattr(dynamo_config, name, True)
            cls._compiled = torch.compile(flex_attention, dynamic=False)
        return cls._compiled

    def block_mask(self, q, k, causal: bool):
        from torch.nn.attention.flex_attention import create_block_mask, noop_mask

        key = (q.shape[-2], k.shape[-2], str(q.device), causal)
        if key not in self._masks:
            self._masks[key] = create_block_mask(_causal if causal else noop_mask, None, None, q.shape[-2],
                                                 k.shape[-2], device=q.device)
        return self._masks[key]

    def bind(self, q, k, v, causal: bool, scale: float | None):
        fn, mask, kw = self.compiled(), self.block_mask(q, k, causal), gqa(q, k)

        def launch():
            return fn(q, k, v, block_mask=mask, scale=scale, **kw)

        return launch


# --- external peers ------------------------------------------------------------------------


def _bshd(q, k, v):
    """(B, H, S, D) -> contiguous (B, S, H, D) copies (made in bind, outside timing)."""
    return tuple(t.transpose(1, 2).contiguous() for t in (q, k, v))


def _shd_single(q, k, v):
    """(1, H, S, D) -> contiguous (S, H, D): one request, FlashInfer's NHD layout."""
    return tuple(t[0].transpose(0, 1).contiguous() for t in (q, k, v))


def _batch_one_only(q, k, v, causal, scale) -> str | None:
    if q.shape[0] != 1:
        return (f"B = {q.shape[0]}: this peer is wired through single_prefill_with_kv_cache (one request), "
                "B = 1 only")
    return None


@dataclass(frozen=True)
class External:
    """One external kernel: where it comes from, how to call it, and its layout."""

    name: str  # the impl name in the run's records
    package: str  # what to pip install for it
    module: str  # import path
    function: str  # attribute of the module that is called
    prepare: Callable  # (q, k, v) in (B, H, S, D) -> the arguments' layout (in bind, outside timing)
    call: Callable  # (fn, q', k', v', causal, scale) -> the library's output
    to_bhsd: Callable  # the library's output -> (B, H, S, D), for the correctness check only
    limits: Callable = lambda q, k, v, causal, scale: None  # a shape it cannot take, said up front
    # (module) -> None, or raises why the imported package cannot run here (a missing library, a version)
    probe: Callable = lambda module: None
    # (module) -> where the kernels come from, one line (default: the package's installed version)
    source: Callable | None = None


def _first(raw):
    return raw[0] if isinstance(raw, (tuple, list)) else raw  # (out, lse) where a library returns both


def _package_version(package: str) -> str:
    from importlib import metadata

    try:
        return f"{package} {metadata.version(package)}"
    except metadata.PackageNotFoundError:
        return f"{package} (version not recorded)"


EXTERNAL = (
    External(name="flash_attn3", package="dew-flash-attn-cu13 (make peers)", module="lab.measure.fa3",
             function="flash_attn_func", prepare=_bshd,
             call=lambda fn, q, k, v, causal, scale: fn(q, k, v, softmax_scale=scale, causal=causal),
             to_bhsd=lambda raw: _first(raw).transpose(1, 2),
             probe=lambda module: module.probe(), source=lambda module: module.describe()),
    External(name="flash_attn_cute", package="flash-attn-4", module="flash_attn.cute", function="flash_attn_func",
             prepare=_bshd,
             call=lambda fn, q, k, v, causal, scale: fn(q, k, v, softmax_scale=scale, causal=causal),
             to_bhsd=lambda raw: _first(raw).transpose(1, 2)),
    External(name="flashinfer", package="flashinfer-python", module="flashinfer",
             function="single_prefill_with_kv_cache", prepare=_shd_single,
             call=lambda fn, q, k, v, causal, scale: fn(q, k, v, causal=causal, sm_scale=scale, kv_layout="NHD"),
             to_bhsd=lambda raw: _first(raw).transpose(0, 1).unsqueeze(0), limits=_batch_one_only),
)


@dataclass
class ExternalPeer(Peer):
    spec: External
    fn: Callable
    module: object = None

    @property
    def name(self) -> str:
        return self.spec.name

    def bind(self, q, k, v, causal: bool, scale: float | None):
        if why := self.spec.limits(q, k, v, causal, scale):
            raise ValueError(why)
        args, call, fn = self.spec.prepare(q, k, v), self.spec.call, self.fn

        def launch():
            return call(fn, *args, causal, scale)

        return launch

    def output_bhsd(self, raw):
        return self.spec.to_bhsd(raw)


def load_external(spec: External) -> tuple[ExternalPeer | None, str]:
    """The peer, or None and why it is absent (one line); never raises."""
    try:
        module = importlib.import_module(spec.module)
        fn = getattr(module, spec.function)
    except Exception as exc:  # noqa: BLE001 - an absent or broken package is recorded, never fatal
        return None, f"{spec.package} not importable ({spec.module}.{spec.function}): {first_line(exc)}"
    try:
        spec.probe(module)
    except Exception as exc:  # noqa: BLE001 - a library that cannot run here is recorded, never fatal
        return None, f"{spec.package} present but unusable ({spec.module}): {first_line(exc)}"
    return ExternalPeer(spec, fn, module), ""


def source_of(peer: Peer) -> str:
    """Where a peer's kernels come from, one line: torch's version for SDPA and flex_attention, the
    package (or library) for an external one."""
    if isinstance(peer, ExternalPeer):
        try:
            return peer.spec.source(peer.module) if peer.spec.source else _package_version(peer.spec.package.split()[0])
        except Exception as exc:  # noqa: BLE001 - said, not fatal
            return f"{peer.spec.package} (source not recorded: {first_line(exc)})"
    return _package_version("torch")


# --- the registry --------------------------------------------------------------------------


def known_names() -> list[str]:
    return [f"sdpa_{b}" for b in BACKENDS] + [FLEX] + [s.name for s in EXTERNAL]


def default_names(backends=DEFAULT_BACKENDS) -> list[str]:
    """A run's peers unless told otherwise: SDPA's backends, flex_attention, every registered external
    (those that do not import are recorded as absent)."""
    return [f"sdpa_{b}" for b in backends] + [FLEX] + [s.name for s in EXTERNAL]


def contenders(names) -> list[str]:
    """The peers a fastest peer is chosen among: `names`, less the dispatcher where one of SDPA's backends is among
    them (it runs one backend's kernels, so beside them it would add a second draw of the same kernels; where
    none of them was timed, it stands for SDPA)."""
    names = list(names)
    backend_timed = any(n.startswith("sdpa_") and n != DISPATCHER for n in names)
    return [n for n in names if n != DISPATCHER] if backend_timed else names


def validate_names(names) -> list[str]:
    """The names, or ValueError naming the unknown ones and the known ones."""
    unknown = [n for n in names if n not in known_names()]
    if unknown:
        raise ValueError(f"unknown peer(s) {', '.join(unknown)}; known: {', '.join(known_names())}")
    if not names:
        raise ValueError("the peer list is empty; name at least one of: " + ", ".join(known_names()))
    return list(names)


def is_peer(name: str) -> bool:
    return name in known_names()


def sdpa_backends(names) -> list[str]:
    return [n[len("sdpa_"):] for n in names if n.startswith("sdpa_")]


def resolve(names) -> tuple[list[Peer], dict[str, dict]]:
    """The usable peers among `names`, and {name: {"available": bool, "reason": str}} for all of them."""
    validate_names(names)
    found, status = [], {}
    externals = {s.name: s for s in EXTERNAL}
    for name in names:
        if name.startswith("sdpa_"):
            peer, why = SdpaPeer(name[len("sdpa_"):]), ""
        elif name == FLEX:
            try:
                importlib.import_module("torch.nn.attention.flex_attention")
                peer, why = FlexAttentionPeer(), ""
            except Exception as exc:  # noqa: BLE001 - an old torch lacks it: recorded
                peer, why = None, f"torch.nn.attention.flex_attention not importable: {first_line(exc)}"
        else:
            peer, why = load_external(externals[name])
        status[name] = {"available": peer is not None, "reason": why}
        if peer is not None:
            status[name]["source"] = source_of(peer)
            found.append(peer)
    return found, status


def get(name: str) -> Peer:
    """One peer by name (ValueError if unknown or absent, with the reason)."""
    found, status = resolve([name])
    if not found:
        raise ValueError(f"peer {name} is absent: {status[name]['reason']}")
    return found[0]


def peers(backends=DEFAULT_BACKENDS) -> list[SdpaPeer]:
    """SDPA under each of `backends` (what `python -m lab bench` compares against)."""
    return [SdpaPeer(b) for b in backends]
