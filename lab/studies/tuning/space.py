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
  must reach the 232 per thread the kernel asks for with setmaxnreg;
- D = 64's other tiles (fa/tile_size.cuh), where the space has their constants: the long-sequence
  tile (BC and STAGES of `*_LONG`, the short tile's warpgroups and CTAs per SM) and the three-CTA
  tile (`*_THREE`: one consumer warpgroup, three CTAs per SM) fit shared memory by the same rules.
  Their thresholds (which calls take them) change no code, only which calls take which tile.

`restricted(knobs)` searches some of the parameters and pins the others at their defaults (`make tune
KNOBS=bc64,st64`).

A configuration whose build shows register spills is rejected after the build (`spill_reason`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
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
        return list(_searched(self, head_dim))

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
        """Dynamic shared memory of the configuration's short-sequence tile (what fa_smem_bytes reports)."""
        sh = _shorts(cfg)
        return self.tile_smem_bytes(cfg.head_dim, sh["wgs"], sh["bc"], sh["st"])

    def tile_smem_bytes(self, head_dim: int, wgs: int, bc: int, stages: int) -> int:
        """A WgmmaTile's dynamic shared memory: Q's rows and the K/V ring, 16-bit, plus the alignment pad."""
        rows = self.limits["rows_per_warpgroup"] * wgs
        return (rows * head_dim + 2 * stages * bc * head_dim) * 2 + self.limits["smem_alignment_slack"]

    @staticmethod
    def ctas_per_sm(cfg: Config) -> int:
        return Space.ctas_per_sm_of(_shorts(cfg)["wgs"])

    @staticmethod
    def ctas_per_sm_of(wgs: int) -> int:
        """Two CTAs share an SM with one consumer warpgroup, else one (fa::hopper_ctas_per_sm)."""
        return 2 if wgs == 1 else 1

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
        reasons += self._thread_and_register_violations(cfg)
        reasons += self._smem_violations("", smem, self.ctas_per_sm(cfg))
        for tile, (bc, stages, wgs, ctas) in _other_tiles(cfg, sh).items():
            reasons += self._smem_violations(f"{tile}: ", self.tile_smem_bytes(cfg.head_dim, wgs, bc, stages), ctas)
        return reasons

    def _smem_violations(self, tile: str, smem: int, ctas: int) -> list[str]:
        """A tile's shared memory against the per-CTA and (if that holds) the per-SM limit."""
        lim = self.limits
        if smem > lim["smem_per_cta_max"]:
            return [f"{tile}shared memory per CTA {smem} B > {lim['smem_per_cta_max']} B (BR*D + 2*STAGES*BC*D halves + 1024)"]
        per_sm = ctas * (smem + lim["smem_reserved_per_cta"])
        if per_sm > lim["smem_per_sm"]:
            return [f"{tile}shared memory per SM {per_sm} B ({ctas} CTAs x ({smem} + {lim['smem_reserved_per_cta']}) B) "
                    f"> {lim['smem_per_sm']} B"]
        return []

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

    def legal(self, head_dim: int) -> tuple[Config, ...]:
        """Every legal configuration of one head dim (the product of the values, filtered; computed once and
        shared: the search asks for it at every proposal)."""
        return _legal(self, head_dim)

    def restricted(self, knobs: str | tuple[str, ...] = "") -> Space:
        """This space with only `knobs` (short names, comma-joined or a tuple) searched and every other
        parameter pinned at its default; all of them where `knobs` is empty. A ValueError names an unknown one."""
        names = [k.strip() for k in (knobs.split(",") if isinstance(knobs, str) else knobs) if k.strip()]
        if not names:
            return self
        unknown = [k for k in names if k not in {p.short for p in self.params}]
        if unknown:
            raise ValueError(f"KNOBS: {', '.join(unknown)} not a tunable of {self.variant} "
                             f"(tunables: {', '.join(p.short for p in self.params)})")
        params = tuple(p if p.short in names else replace(p, values=(p.default,)) for p in self.params)
        return Space(self.variant, params, self.limits)

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


# D = 64's tiles besides the short one: name -> (its BC and STAGES shorts, its warpgroups: None for the short
# tile's, its CTAs per SM: None for the short tile's rule), as fa/tile_size.cuh builds them (the three-warpgroup
# tiles take the short tile's keys a tile, and the counter's its stages too).
OTHER_TILES = {"long tile": ("bcl", "stl", None, None), "three-CTA tile": ("bct", "stt", 1, 3),
               "three-warpgroup tile": ("bc", "stw", 3, 1), "three-warpgroup tile from the counter": ("bc", "st", 3, 1)}


def _other_tiles(cfg: Config, sh: dict) -> dict[str, tuple[int, int, int, int]]:
    """(BC, STAGES, WGS, CTAs per SM) of each other tile whose constants the configuration holds (D = 64's only:
    a D = 128 configuration's bc and st are its short tile's)."""
    if cfg.head_dim != 64:
        return {}
    values = {short.removesuffix(str(cfg.head_dim)): v for short, v in cfg.values}
    out = {}
    for tile, (bc, st, wgs, ctas) in OTHER_TILES.items():
        if bc in values and st in values:
            w = sh["wgs"] if wgs is None else wgs
            out[tile] = (values[bc], values[st], w, Space.ctas_per_sm_of(w) if ctas is None else ctas)
    return out


# The short tile's parameters (short names without the head dim: _shorts, threads' "pw").
SHORT_TILE = {"bc", "st", "wgs", "pw"}
# The parameters the constraints read: the short tile's and the other tiles'; every other one (a threshold, a
# scheduler's choice) only has to take one of its values, so legality is decided without it.
CONSTRAINED = SHORT_TILE | {name for bc, st, _, _ in OTHER_TILES.values() for name in (bc, st)}


def base_name(p: Param) -> str:
    """A parameter's short name without its head dim ("bc64" -> "bc"; a shared one's as it is)."""
    return p.short.removesuffix(str(p.head_dim)) if p.head_dim else p.short


@cache
def _legal(sp: Space, head_dim: int) -> tuple[Config, ...]:
    """The constrained parameters' legal combinations, each with every combination of the free ones."""
    import itertools

    params = sp.of_head_dim(head_dim)
    bound = [p for p in params if base_name(p) in CONSTRAINED]
    free = [p for p in params if p not in bound]
    out = []
    for combo in itertools.product(*(p.values for p in bound)):
        values = {p.short: v for p, v in zip(bound, combo)}
        if sp.violations(sp.config(head_dim, values)):
            continue
        for rest in itertools.product(*(p.values for p in free)):
            out.append(sp.config(head_dim, {**values, **{p.short: v for p, v in zip(free, rest)}}))
    return tuple(out)


@cache
def _searched(sp: Space, head_dim: int) -> tuple[Param, ...]:
    legal = sp.legal(head_dim)
    return tuple(p for p in sp.of_head_dim(head_dim) if len({c[p.short] for c in legal}) > 1)


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
