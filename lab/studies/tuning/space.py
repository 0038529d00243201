"""A kernel's tunable compile-time parameters: declared in the manifest, checked before building.

    >>> from lab.studies.tuning import space as ts
    >>> space = ts.space()                 # the tuned kernel (manifest.tuned_kernel())
    >>> cfg = space.config(64, {"bc64": 64, "st64": 4})
    >>> space.violations(cfg)          # [] when legal, else one reason per broken constraint
    >>> space.impl_name(cfg)           # '<kernel>@bc64=64,st64=4' (only non-default values)
    >>> space.defines(cfg)             # {'FA_TILE_BC_D64': 64, 'FA_TILE_STAGES_D64': 4}
    >>> space.parse_impl(space.variant + '@wgs64=2')

A configuration is one head dim's parameters (the kernel of the other head dim stays as written):
the two kernels are separate instantiations, so searching them jointly would only mix two
independent problems. Constraints (from `[[tunable_limits]]` in the manifest):

- each value is one the manifest lists;
- ping-pong (FA_PING_PONG=1, the default) takes turns between two consumer warpgroups: WGS = 2 at D = 128;
- K/V tiles are whole 64-key TMA boxes: BC % bc_multiple == 0;
- dynamic shared memory (BR*D + 2*STAGES*BC*D)*2 + 1024 <= smem_per_cta_max (BR = 64*WGS);
- CTAs per SM (2 when WGS == 1, else 1) * (smem + smem_reserved_per_cta) <= smem_per_sm;
- threads (128 per consumer warpgroup + 32 per producer warp) within the CTA and SM limits, and
  registers: the consumers' share of the CTA's allocation (as wgmma_attention.cuh computes it)
  must reach the 232 per thread the kernel asks for with setmaxnreg.

A configuration whose build shows register spills is rejected after the build (`spill_reason`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from lab.kernels import manifest
from lab.kernels.manifest import SUPPORTED_HEAD_DIMS

CONFIG_SEP = "@"  # a configuration's impl name: `<variant>@<short>=<value>,...`
_IMPL_RE = re.compile(rf"^([a-z0-9_]+){CONFIG_SEP}([a-z0-9]+=-?\d+(?:,[a-z0-9]+=-?\d+)*)$")


@dataclass(frozen=True)
class Param:
    macro: str
    short: str
    head_dim: int  # 0: shared by both head dims
    values: tuple[int, ...]
    default: int
    doc: str = ""


@dataclass(frozen=True)
class Config:
    """One head dim's parameter values (every parameter of that head dim, by short name)."""

    head_dim: int
    values: tuple[tuple[str, int], ...]  # sorted (short, value) pairs

    def __getitem__(self, short: str) -> int:
        return dict(self.values)[short]

    def as_dict(self) -> dict[str, int]:
        return dict(self.values)


@dataclass(frozen=True)
class Space:
    variant: str
    params: tuple[Param, ...]
    limits: dict = field(default_factory=dict, hash=False, compare=False)

    # --- the parameters -----------------------------------------------------------------
    def of_head_dim(self, head_dim: int) -> list[Param]:
        """The parameters a configuration for `head_dim` sets (its own and the shared ones)."""
        if head_dim not in SUPPORTED_HEAD_DIMS:
            raise ValueError(f"head dim must be one of {SUPPORTED_HEAD_DIMS}, got {head_dim}")
        return [p for p in self.params if p.head_dim in (0, head_dim)]

    def searched(self, head_dim: int) -> list[Param]:
        """The parameters that take more than one value among the legal configurations (what a
        search varies; WGS at D = 128 is pinned to 2 by ping-pong, so it is not searched)."""
        legal = self.legal(head_dim)
        return [p for p in self.of_head_dim(head_dim) if len({c[p.short] for c in legal}) > 1]

    def param(self, short: str) -> Param:
        for p in self.params:
            if p.short == short:
                return p
        raise KeyError(f"{self.variant} has no tunable {short!r}; known: {', '.join(p.short for p in self.params)}")

    def default(self, head_dim: int) -> Config:
        return self.config(head_dim, {})

    def config(self, head_dim: int, values: dict[str, int]) -> Config:
        """A configuration: the given values over the defaults. Unknown names raise KeyError."""
        mine = {p.short: p.default for p in self.of_head_dim(head_dim)}
        for short, value in values.items():
            if short not in mine:
                p = self.param(short)  # raises for an unknown name
                raise KeyError(f"{short} belongs to D = {p.head_dim}, not to a D = {head_dim} configuration")
            mine[short] = int(value)
        return Config(head_dim, tuple(sorted(mine.items())))

    # --- constraints --------------------------------------------------------------------
    def smem_bytes(self, cfg: Config) -> int:
        sh = _shorts(cfg)
        rows = self.limits["rows_per_warpgroup"] * sh["wgs"]
        d = cfg.head_dim
        return (rows * d + 2 * sh["st"] * sh["bc"] * d) * 2 + self.limits["smem_alignment_slack"]

    @staticmethod
    def ctas_per_sm(cfg: Config) -> int:
        return 2 if _shorts(cfg)["wgs"] == 1 else 1

    def threads(self, cfg: Config) -> int:
        return 128 * _shorts(cfg)["wgs"] + 32 * cfg["pw"]

    def consumer_registers(self, cfg: Config) -> int:
        """The consumers' share of the CTA's registers, as wgmma_attention.cuh computes it: the
        launch allocation (registers per SM over resident threads, in 8s) less the producer's."""
        lim, wgs = self.limits, _shorts(cfg)["wgs"]
        threads = self.threads(cfg)
        launch = lim["registers_per_sm"] // (threads * self.ctas_per_sm(cfg)) // 8 * 8
        producer = lim["producer_registers"][0 if wgs == 1 else 1]
        return (threads * launch - 32 * cfg["pw"] * producer) // (128 * wgs) // 8 * 8

    def violations(self, cfg: Config, switches: dict | None = None) -> list[str]:
        """Every broken constraint, as a sentence naming it; [] for a legal configuration.
        `switches` are other FA_* defines built alongside (FA_PING_PONG decides the WGS rule)."""
        reasons = []
        for short, value in cfg.values:
            p = self.param(short)
            if value not in p.values:
                reasons.append(f"{p.macro}={value} is not a legal value (legal: {list(p.values)})")
        sh = _shorts(cfg)
        ping_pong = int((switches or {}).get("FA_PING_PONG", 1))
        if cfg.head_dim == 128 and ping_pong and sh["wgs"] != 2:
            reasons.append(f"ping-pong needs 2 consumer warpgroups at D = 128 (FA_PING_PONG=1), got WGS={sh['wgs']}")
        if sh["bc"] % self.limits["bc_multiple"]:
            reasons.append(f"BC={sh['bc']} is not a multiple of {self.limits['bc_multiple']} (whole TMA boxes)")
        smem = self.smem_bytes(cfg)
        if smem > self.limits["smem_per_cta_max"]:
            reasons.append(f"shared memory per CTA {smem} B > {self.limits['smem_per_cta_max']} B "
                           f"(BR*D + 2*STAGES*BC*D halves + 1024)")
        reasons += self._thread_and_register_violations(cfg)
        ctas = self.ctas_per_sm(cfg)
        per_sm = ctas * (smem + self.limits["smem_reserved_per_cta"])
        if smem <= self.limits["smem_per_cta_max"] and per_sm > self.limits["smem_per_sm"]:
            reasons.append(f"shared memory per SM {per_sm} B ({ctas} CTAs x ({smem} + "
                           f"{self.limits['smem_reserved_per_cta']}) B) > {self.limits['smem_per_sm']} B")
        return reasons

    def _thread_and_register_violations(self, cfg: Config) -> list[str]:
        lim, out = self.limits, []
        threads, ctas = self.threads(cfg), self.ctas_per_sm(cfg)
        if threads > lim["max_threads_per_cta"]:
            out.append(f"{threads} threads per CTA > {lim['max_threads_per_cta']}")
        if threads * ctas > lim["max_threads_per_sm"]:
            out.append(f"{ctas} CTAs x {threads} threads > {lim['max_threads_per_sm']} threads per SM")
        if (regs := self.consumer_registers(cfg)) < lim["consumer_registers"]:
            out.append(f"registers: the consumers' share is {regs} per thread < the {lim['consumer_registers']} "
                       f"the kernel sets (registers per SM / (threads x CTAs), less the producer's)")
        return out

    def legal(self, head_dim: int) -> list[Config]:
        """Every legal configuration of one head dim (the product of the values, filtered)."""
        import itertools

        params = self.of_head_dim(head_dim)
        out = []
        for combo in itertools.product(*(p.values for p in params)):
            cfg = self.config(head_dim, {p.short: v for p, v in zip(params, combo)})
            if not self.violations(cfg):
                out.append(cfg)
        return out

    # --- names and defines --------------------------------------------------------------
    def defines(self, cfg: Config) -> dict[str, int]:
        """FA_* defines of the non-default values (the default configuration builds with none)."""
        return {self.param(s).macro: v for s, v in cfg.values if v != self.param(s).default}

    def impl_name(self, cfg: Config) -> str:
        """'variant@short=value,...' with only the non-default values; the variant's own name
        for the default. Stable: parameters in sorted order."""
        changed = [f"{s}={v}" for s, v in cfg.values if v != self.param(s).default]
        return f"{self.variant}{CONFIG_SEP}{','.join(changed)}" if changed else self.variant

    def parse_impl(self, impl: str, head_dim: int | None = None) -> Config:
        """The inverse of impl_name. The variant's bare name is its default (give head_dim)."""
        if impl == self.variant:
            if head_dim is None:
                raise ValueError(f"{impl!r} is the default of both head dims: give head_dim")
            return self.default(head_dim)
        m = _IMPL_RE.match(impl)
        if not m or m.group(1) != self.variant:
            raise ValueError(f"{impl!r} is not a configuration name of {self.variant} ({self.variant}@short=value,...)")
        values = {k: int(v) for k, v in (item.split("=") for item in m.group(2).split(","))}
        dims = {self.param(s).head_dim for s in values} - {0}
        if len(dims) > 1:
            raise ValueError(f"{impl!r} mixes parameters of D = 64 and D = 128")
        d = dims.pop() if dims else head_dim
        if d is None:
            raise ValueError(f"{impl!r} sets only shared parameters: give head_dim")
        return self.config(d, values)


def _shorts(cfg: Config) -> dict[str, int]:
    """bc / st / wgs of a configuration, whatever their head-dim suffix."""
    out = {}
    for short, value in cfg.values:
        base = short.removesuffix(str(cfg.head_dim))
        if base in ("bc", "st", "wgs"):
            out[base] = value
    missing = {"bc", "st", "wgs"} - set(out)
    if missing:
        raise ValueError(f"configuration lacks {sorted(missing)} for D = {cfg.head_dim}")
    return out


@cache
def space(variant: str | None = None) -> Space:
    """The variant's tunable space from the manifest (default: its tuned kernel); a ValueError names
    what is malformed."""
    variant = variant or manifest.tuned_kernel()
    raw = manifest.tables()
    params = []
    for t in raw.get("tunable", []):
        if t.get("variant") != variant:
            continue
        p = Param(macro=t["macro"], short=t["short"], head_dim=int(t["head_dim"]),
                  values=tuple(int(v) for v in t["values"]), default=int(t["default"]), doc=t.get("doc", ""))
        if p.default not in p.values:
            raise ValueError(f"manifest: tunable {p.macro} default {p.default} is not among its values {p.values}")
        if not p.macro.startswith("FA_"):
            raise ValueError(f"manifest: tunable {p.macro} must be an FA_* macro")
        params.append(p)
    if not params:
        raise ValueError(f"manifest: no [[tunable]] table names variant {variant!r}")
    shorts = [p.short for p in params]
    if len(set(shorts)) != len(shorts):
        raise ValueError(f"manifest: tunable short names repeat: {shorts}")
    limits = [t for t in raw.get("tunable_limits", []) if t.get("variant") == variant]
    if len(limits) != 1:
        raise ValueError(f"manifest: expected one [[tunable_limits]] table for {variant!r}, found {len(limits)}")
    return Space(variant, tuple(params), {k: v for k, v in limits[0].items() if k != "variant"})


def spill_reason(ptxas: list[dict]) -> str:
    """'' when no kernel of a build spills registers, else which kernels spill how much."""
    bad = [f"{k.get('kernel', '?')[:60]} (D = {k.get('head_dim')}): {k['spill_stores']} B spill stores, "
           f"{k['spill_loads']} B spill loads" for k in ptxas if k.get("spill_stores") or k.get("spill_loads")]
    return ("register spills: " + "; ".join(bad)) if bad else ""
