"""The parameters of a ladder run and of a tuning run: their names, defaults and rules, in one place.

`RunParams` is what `make ablation`, `python -m lab.pipeline`, `python -m lab run`, notebook 00
(through lab.notebook_support) and a run's stages take, and what a run's params.json records;
`TuneParams` is the same for `make tune` / `python -m lab tune`. Each dataclass's field defaults
are the defaults; `RUN_OPTIONS` and `TUNE_OPTIONS` (the tables of options.toml, beside this file)
say how a user types each field (the flag of the command lines, the variable of make). The command
lines are built from them, make passes on only the variables given to it (so that every default is
the one here), and `make help` (`python -m lab.studies.params`) and docs/parameters.md
(lab.report.docs) print them.

    >>> p = RunParams.from_text(shapes="large", modes="hot", cap_s="2")  # a ValueError names a bad option
    >>> p.modes, p.cap_s, p.stop_rule().min_samples
    (('hot',), 2.0, 50)
    >>> RunParams.read(rec)        # a run's params.json, an old run's missing fields filled in
"""

from __future__ import annotations

import math
import sys
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

from lab.kernels import manifest
from lab.kernels.shape import Shape
from lab.measure.peers import BACKENDS, DEFAULT_BACKENDS
from lab.measure.stats.samples import MIN_ROUNDS
from lab.measure.timing import SUSTAINED_MIN_TURNS, StopRule
from lab.studies.shapes import DEFAULT_SUSTAINED, SCOPES, decode_shapes_from, scopes_from, shapes_from, spec_of

MODES = ("hot", "cold", "sustained")
CHECKS = ("full", "quick", "none")
DEFAULT_SHAPES = "canonical,large,long,sweep,models"


@dataclass(frozen=True)
class Option:
    """How a user types one field: `flag` on the command lines, `make` on make's (`make ablation
    SHAPES=large`; make passes it on as the flag spelled from the variable's name)."""

    name: str  # the dataclass field it sets
    flag: str
    make: str  # "" where make has no variable for it
    help: str
    type: type = str  # what argparse turns the text into (a one-line error where it cannot)
    choices: tuple = ()  # a closed list argparse checks

    @property
    def label(self) -> str:
        """How an error names the option: '--cap / CAP'."""
        return f"{self.flag} / {self.make}" if self.make else self.flag

    @property
    def flags(self) -> list[str]:
        """The flag, and the one make spells from its variable where that differs (HELDOUT -> --heldout)."""
        return list(dict.fromkeys([self.flag, *(["--" + self.make.lower().replace("_", "-")] if self.make else [])]))

    def add_to(self, parser, default_text: str) -> None:
        kw = {"choices": self.choices} if self.choices else {}
        help_ = f"{self.help} (default: {default_text or 'empty'})".replace("%", "%%")  # argparse %-formats help
        parser.add_argument(*self.flags, dest=self.name, type=self.type, default=None, help=help_, **kw)


OPTIONS_FILE = Path(__file__).with_name("options.toml")  # the option tables: name, flag, make, type, choices, help


def _options(table: str) -> tuple[Option, ...]:
    """OPTIONS_FILE's [[table]] entries, in order, as Options."""
    types = {"str": str, "int": int, "float": float}
    with OPTIONS_FILE.open("rb") as f:
        entries = tomllib.load(f)[table]
    return tuple(Option(e["name"], e["flag"], e["make"], e["help"], types[e.get("type", "str")],
                        tuple(e.get("choices", ()))) for e in entries)


def _names(text) -> tuple[str, ...]:
    return tuple(x.strip() for x in str(text).split(",") if x.strip())


RUN_OPTIONS = _options("run")
TUNE_OPTIONS = _options("tune")
PROFILE_SHAPES = next(o.choices for o in RUN_OPTIONS if o.name == "profile_shapes")


def resolve_count(gpus, available: int) -> int:
    """How many GPUs a run asks for: "all" (every visible one, at least 1) or a positive number no larger
    than those visible; ValueError naming the constraint otherwise."""
    if gpus in ("all", None):
        return max(1, available)
    try:
        n = int(gpus)
    except (TypeError, ValueError):
        raise ValueError(f"GPUS={gpus!r}: a positive number of GPUs, or 'all'") from None
    if n < 1:
        raise ValueError(f"GPUS={gpus!r}: a positive number of GPUs, or 'all'")
    if available and n > available:
        raise ValueError(f"GPUS={n}: only {available} GPU(s) visible to this process")
    return n


REPLICATE_SEED_STRIDE = 100_000  # replicate r's seeds: the run's + r * this (replicate 0: the run's own)


@dataclass(frozen=True)
class RunParams:
    """A ladder run's parameters as its record holds them. The field defaults are the defaults
    of `make ablation` and of every other way to start a run."""

    variants: tuple[str, ...] = ()  # () = every step of the manifest (resolved() names them)
    shapes: tuple[Shape, ...] = field(default_factory=lambda: tuple(shapes_from(DEFAULT_SHAPES)))
    shape_scopes: tuple[str, ...] = field(default_factory=lambda: tuple(scopes_from(DEFAULT_SHAPES)))
    modes: tuple[str, ...] = MODES
    # Where the sustained mode runs: the run's shapes among this spec's (lab.studies.shapes.DEFAULT_SUSTAINED)
    sustained: str = DEFAULT_SUSTAINED
    # A sustained row's turns in each replicate, at the least (StopRule.sustained_turns): the power cap's wander
    # lives between turns, so its intervals narrow with turns x replicates, not with samples
    sustained_turns: int = SUSTAINED_MIN_TURNS
    cap_s: float = 3.0
    rel_ci: float = 0.005
    min_samples: int = 50
    # A replicate's minimum samples come in at least this many blocks of the round robin (one
    # replicate: StopRule's blocks of 10, as before replicates). A block is one
    # implementation's turn: more, smaller blocks interleave the rows more finely, so that a GPU
    # clock state lasting a block or two falls on every row alike (at launches of a few ms, two
    # blocks of 9 an implementation let such states decide a replicate's medians), at the cost of one
    # synchronisation and two clock readings a block.
    min_blocks: int = 6
    # A cold turn's GPU time (StopRule.turn_us): one sample a turn at launches of a millisecond and
    # more. On an H100 at Llama-3-70B S = 8192, cold, step 35 against cuDNN over twelve repeats: SD of
    # the ratio of medians 3.6 % in turns of 3 and 9 samples, 0.9 % in turns of one
    # (data/explorations/2026-11-26-cold-drift/).
    cold_turn_us: float = 1000.0
    # A hot turn's GPU time (StopRule.hot_turn_us): one sample a turn at launches of 2 ms and more, so
    # that a burst is one. On an H100 at three long shapes, turns of 3-9 samples read FA3 2-6 % and cuDNN
    # up to 10 % slower than one-sample turns, which came within 1.0-2.5 % of Nsight Compute's lone
    # launches (data/explorations/2026-11-28-hot-turn-length/).
    hot_turn_us: float = 4000.0
    profile: bool = True
    profile_shapes: str = "distinct"
    check: str = "full"
    knockouts: bool = True
    # () = SDPA under `backends`, flex_attention and every registered external peer (resolved()
    # names them); None = a run recorded before peers.json, which timed SDPA under `backends` only.
    peers: tuple[str, ...] | None = ()
    backends: tuple[str, ...] = DEFAULT_BACKENDS
    replicates: int = 3  # runs recorded before replicates existed: 1
    seed: int = 0
    stop_guard: tuple = (StopRule.guard_confidence, StopRule.guard_factor)  # (None, f): no guard
    # GPUs side by side (issue 49): every visible one (data/checks/2026-11-28-h200x2-gpus-ablation measured
    # two against one); lab.studies.gpu_pool.for_run settles what a run records
    gpus: str = "all"
    # The decode shapes (issue 50), lab.studies.shapes.decode_shapes_from's spec; runs before it: ""
    decode: str = "decode"

    def __post_init__(self):
        for name in ("variants", "shape_scopes", "modes", "backends", "stop_guard"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "shapes", tuple(Shape.of(s) for s in self.shapes))
        if self.peers is not None:
            object.__setattr__(self, "peers", tuple(self.peers))

    # --- from what a user typed ---------------------------------------------------------------

    @classmethod
    def from_text(cls, **given) -> RunParams:
        """From options as typed (RUN_OPTIONS' names; one that is missing or None keeps its
        default), validated: a ValueError names the option and the rule it breaks."""
        opts = {o.name: o for o in RUN_OPTIONS}
        if unknown := set(given) - set(opts):
            raise ValueError(f"unknown run parameter(s) {', '.join(sorted(unknown))}; known: {', '.join(opts)}")
        given = {k: v for k, v in given.items() if v is not None}
        values = {}
        for name, text in given.items():
            o = opts[name]
            if name in ("variants", "modes", "peers", "backends"):
                values[name] = _names(text)
            elif name == "shapes":
                try:
                    values.update(shapes=shapes_from(str(text)), shape_scopes=scopes_from(str(text)))
                except ValueError as exc:
                    raise ValueError(f"{o.label}={text!r}: {exc}") from None
            else:
                try:
                    values[name] = o.type(text)
                except (TypeError, ValueError):
                    raise ValueError(f"{o.label}={text!r}: not {o.type.__name__}") from None
        p = cls(**values)
        p.validate(given)
        return replace(p, profile=bool(p.profile), knockouts=bool(p.knockouts))

    @classmethod
    def from_args(cls, args) -> RunParams:
        """From an argparse namespace built by add_run_options (options it lacks keep their default)."""
        return cls.from_text(**{o.name: getattr(args, o.name, None) for o in RUN_OPTIONS})

    def validate(self, typed: dict | None = None) -> None:
        """Raise a ValueError naming the first broken rule; `typed`: the options as the user typed
        them, for the message."""
        from lab.kernels import variants
        from lab.measure import peers

        opts = {o.name: o for o in RUN_OPTIONS}
        typed = typed or {}

        def said(name):
            return f"{opts[name].label}={typed.get(name, getattr(self, name))!r}"

        for s in self.shapes:
            if min(s.B, s.H, s.S) < 1 or s.D not in variants.SUPPORTED_HEAD_DIMS:
                raise ValueError(f"{opts['shapes'].label}: shape {s}: B, H and S must be at least 1 and D one of "
                                 f"{variants.SUPPORTED_HEAD_DIMS}")
        if len(self.shape_scopes) != len(self.shapes) or not set(self.shape_scopes) <= set(SCOPES):
            raise ValueError(f"shape_scopes must give one of {SCOPES} per shape ({len(self.shapes)}), "
                             f"not {self.shape_scopes!r}")
        if unknown := [v for v in self.variants if v not in variants.names()]:
            raise ValueError(f"{opts['variants'].label}: unknown variant(s) {', '.join(unknown)}; known: "
                             f"{', '.join(variants.names())}")
        if not self.modes or any(m not in MODES for m in self.modes):
            raise ValueError(f"{said('modes')}: a comma-separated subset of {', '.join(MODES)}")
        try:
            wanted = shapes_from(self.sustained)
        except ValueError as exc:
            raise ValueError(f"{said('sustained')}: {exc}") from None
        if "sustained" in typed and "sustained" in self.modes and not set(wanted) & set(self.shapes):
            raise ValueError(f"{said('sustained')}: none of its {len(wanted)} shape(s) is among the run's "
                             f"{opts['shapes'].label} ({spec_of(list(self.shapes))}), so the sustained mode would "
                             "measure nothing")
        if self.sustained_turns < MIN_ROUNDS:
            raise ValueError(f"{opts['sustained_turns'].label}={self.sustained_turns}: at least {MIN_ROUNDS}, "
                             "the rounds a row's ratio needs to be compared round by round")
        if self.check not in CHECKS:
            raise ValueError(f"{said('check')}: one of {', '.join(CHECKS)}")
        for name in ("profile", "knockouts"):
            if getattr(self, name) not in (0, 1):
                raise ValueError(f"{said(name)}: 0 or 1")
        if self.profile_shapes not in PROFILE_SHAPES:
            raise ValueError(f"{said('profile_shapes')}: one of {', '.join(PROFILE_SHAPES)}")
        if not self.cap_s > 0:
            raise ValueError(f"{opts['cap_s'].label}={self.cap_s:g}: seconds per (implementation, shape, mode), "
                             "more than 0")
        if not 0 < self.rel_ci < 1:
            raise ValueError(f"{opts['rel_ci'].label}={self.rel_ci:g}: a relative CI half-width between 0 and 1 "
                             "(0.005 = +-0.5%)")
        if self.min_samples < 1:
            raise ValueError(f"{opts['min_samples'].label}={self.min_samples}: at least 1")
        if not 1 <= self.min_blocks <= self.min_samples:
            raise ValueError(f"{opts['min_blocks'].label}={self.min_blocks}: at least 1 and at most "
                             f"{opts['min_samples'].label} ({self.min_samples})")
        if not self.cold_turn_us >= 0:
            raise ValueError(f"{opts['cold_turn_us'].label}={self.cold_turn_us:g}: microseconds of GPU time a cold "
                             "turn, 0 or more (0: no limit)")
        if not self.hot_turn_us >= 0:
            raise ValueError(f"{opts['hot_turn_us'].label}={self.hot_turn_us:g}: microseconds of GPU time a hot "
                             "turn, 0 or more (0: no limit)")
        if self.replicates < 1:
            raise ValueError(f"{opts['replicates'].label}={self.replicates}: at least 1")
        try:
            resolve_count(self.gpus, 0)  # how many are visible is asked when the run starts (gpu_pool)
        except ValueError:
            raise ValueError(f"{opts['gpus'].label}={self.gpus!r}: 'all' or a positive number of GPUs") from None
        try:
            decode_shapes_from(self.decode)
        except ValueError as exc:
            raise ValueError(f"{opts['decode'].label}={self.decode!r}: {exc}") from None
        if any(b not in BACKENDS for b in self.backends):
            raise ValueError(f"{said('backends')}: a comma-separated subset of {', '.join(BACKENDS)}")
        if self.peers:
            try:
                peers.validate_names(list(self.peers))
            except ValueError as exc:
                raise ValueError(f"{said('peers')}: {exc}") from None

    def as_text(self) -> dict[str, str]:
        """Each option as a user would type it (its make variable's value)."""
        return {"variants": ",".join(self.variants), "shapes": spec_of(list(self.shapes)),
                "modes": ",".join(self.modes), "sustained": self.sustained,
                "sustained_turns": str(self.sustained_turns), "cap_s": f"{self.cap_s:g}",
                "rel_ci": f"{self.rel_ci:g}",
                "min_samples": str(self.min_samples), "min_blocks": str(self.min_blocks),
                "cold_turn_us": f"{self.cold_turn_us:g}", "hot_turn_us": f"{self.hot_turn_us:g}",
                "profile": str(int(self.profile)),
                "profile_shapes": self.profile_shapes, "check": self.check, "knockouts": str(int(self.knockouts)),
                "peers": ",".join(self.peers or ()), "backends": ",".join(self.backends),
                "replicates": str(self.replicates), "seed": str(self.seed), "gpus": self.gpus, "decode": self.decode}

    # --- the run's record ----------------------------------------------------------------------

    def resolved(self) -> RunParams:
        """The steps and peers named: every step where none was given, the default peers; `backends`
        then the SDPA ones among the peers (as params.json records them)."""
        from lab.kernels import variants
        from lab.measure import peers

        names = self.peers or tuple(peers.default_names(self.backends))
        return replace(self, variants=self.variants or tuple(variants.names()), peers=names,
                       backends=tuple(peers.sdpa_backends(list(names))))

    def to_json(self) -> dict:
        """params.json (of resolved() params)."""
        d = asdict(self)
        d.update(variants=list(self.variants), shapes=[list(s.astuple()) for s in self.shapes],
                 shape_scopes=list(self.shape_scopes), modes=list(self.modes), backends=list(self.backends),
                 peers=list(self.peers) if self.peers is not None else None, stop_guard=list(self.stop_guard))
        return d

    @classmethod
    def from_json(cls, d: dict) -> RunParams:
        """A run's params.json read back. Runs recorded before a field existed lack it; it is
        filled in with what those runs did: min_samples 20 (StopRule's minimum then), no stop
        guard, no knock-outs, every shape measured as a ladder shape, one profiled shape per (S, D),
        SDPA under `backends` as the only peers, one replicate, min_blocks 2 (the blocks those
        runs' rules gave), and no limit on a cold or a hot turn's GPU time (cold_turn_us and
        hot_turn_us 0), no decode shapes (decode ""), and the sustained mode (where they had it) at the large
        set (sustained "large"), three turns a row (sustained_turns 3)."""
        known = {f.name for f in fields(cls)}
        raw = {k: v for k, v in d.items() if k in known}
        shapes = [Shape.of(s) for s in raw.get("shapes", [])]
        raw.update(shapes=shapes, shape_scopes=raw.get("shape_scopes") or ["ladder"] * len(shapes),
                   min_samples=raw.get("min_samples", 20), knockouts=bool(raw.get("knockouts", False)),
                   profile_shapes=raw.get("profile_shapes", "distinct"),
                   stop_guard=raw.get("stop_guard") or (None, 2.0), peers=raw.get("peers"),
                   replicates=int(raw.get("replicates", 1)), min_blocks=int(raw.get("min_blocks", 2)),
                   cold_turn_us=float(raw.get("cold_turn_us", 0.0)),
                   hot_turn_us=float(raw.get("hot_turn_us", 0.0)),  # before issue 45's ncu cross-check
                   modes=raw.get("modes") or ("hot", "cold"),  # before issue 45's sustained mode
                   sustained=str(raw.get("sustained") or "large"),  # before SUSTAINED: the large set's four
                   sustained_turns=int(raw.get("sustained_turns", 3)),  # before SUSTAINED_TURNS: three
                   gpus=str(raw.get("gpus", "1")),  # before issue 49: one GPU
                   decode=str(raw.get("decode", "")))  # before issue 50's decode stage: none
        return cls(**raw)

    @classmethod
    def read(cls, rec) -> RunParams:
        """The parameters of a run record (lab.measure.records.RunRecord)."""
        return cls.from_json(rec.read_json("params.json"))

    # --- what the stages use --------------------------------------------------------------------

    @property
    def scopes(self) -> dict[Shape, str]:
        """Shape -> what it is measured with (lab.studies.shapes.SCOPES)."""
        return dict(zip(self.shapes, self.shape_scopes))

    @property
    def sustained_shapes(self) -> list[Shape]:
        """The run's shapes the sustained mode measures (where the run has the mode), in the run's order."""
        if "sustained" not in self.modes:
            return []
        wanted = set(shapes_from(self.sustained))
        return [s for s in self.shapes if s in wanted]

    @property
    def decode_shapes(self) -> list:
        """The decode shapes the run times (lab.kernels.decode.DecodeShape; [] where DECODE is empty)."""
        return decode_shapes_from(self.decode)

    def stop_rule(self) -> StopRule:
        """The stopping rule of the run as a whole (one replicate: what every row follows)."""
        confidence, factor = self.stop_guard
        return StopRule(rel_ci=self.rel_ci, cap_s=self.cap_s, min_samples=self.min_samples,
                        guard_confidence=confidence, guard_factor=factor, turn_us=self.cold_turn_us or None,
                        hot_turn_us=self.hot_turn_us or None, sustained_turns=self.sustained_turns)

    def replicate_rule(self) -> StopRule:
        """The stopping rule of each of the R replicates: the run's sample budget shared out, not
        multiplied. Each replicate stops at +-rel_ci * sqrt(R) (the mean of R replicates then has
        about the run's +-rel_ci of sampling error), after at least ceil(min_samples / R) samples
        taken in at least min_blocks interleaved blocks (of at most the run's 10; after the minimum,
        blocks of half the minimum, as min_blocks 2 has throughout), or after cap_s / R seconds.
        The CI test is each replicate's own, not the pooled samples': pooled, it would keep sampling
        to shrink a difference between replicates that more samples within them cannot shrink.
        One replicate: stop_rule() itself."""
        rule = self.stop_rule()
        R = self.replicates
        if R == 1:
            return rule
        minimum = math.ceil(self.min_samples / R)
        block = max(1, min(rule.block, math.ceil(minimum / self.min_blocks)))
        return replace(rule, rel_ci=self.rel_ci * math.sqrt(R), cap_s=self.cap_s / R, min_samples=minimum,
                       block=block, block_after_minimum=max(block, min(rule.block, math.ceil(minimum / 2))))

    def replicate_seed(self, replicate: int) -> int:
        """The seed of replicate r (its inputs; its interleave adds the shape's index)."""
        return self.seed + REPLICATE_SEED_STRIDE * replicate


def add_run_options(parser) -> None:
    """RUN_OPTIONS' flags on an argparse parser, each with its default in the help."""
    defaults = RunParams().as_text()
    for o in RUN_OPTIONS:
        o.add_to(parser, defaults[o.name])


# --- a tuning run -------------------------------------------------------------------------------

# Switches of `python -m lab tune` (make: TUNE_FLAGS='--no-prune ...'): flag -> (field, value when given, help)
TUNE_SWITCHES = {
    "--no-prune": ("prune", False, "measure every trial on every shape"),
    "--no-prebuild": ("prebuild", False, "let each trial build its own configuration"),
    "--no-heldout": ("heldout", False, "skip the held-out validation"),
    "--no-dispatch-update": ("update_dispatch", False, "leave kernels/variants/dispatch_<variant>.json as it is"),
    "--fake": ("fake", True, "CPU dry run: dask LocalCluster and synthetic latencies, under build/tuning-fake/"),
}


@dataclass
class TuneParams:
    """A tuning run's parameters (its params.json); the field defaults are `make tune`'s."""

    variant: str = field(default_factory=manifest.tuned_kernel)  # the sm_90a end, per the manifest
    shapes: str = "tune"
    heldout_shapes: str = "heldout"
    trials: int = 16
    sampler: str = "tpe"
    gpus: str = "all"
    seed: int = 0
    modes: str = "hot"
    cap_s: float = 1.0
    rel_ci: float = 0.005
    min_samples: int = 50
    budget_s: float = 300.0
    prune: bool = True
    prebuild: bool = True
    task_timeout_s: float = 180.0  # one trial on one shape; past it the worker is restarted
    knobs: str = ""  # the tunables searched (lab.studies.tuning.space.Space.restricted); empty: all
    heldout: bool = True
    fake: bool = False
    update_dispatch: bool = True

    def rule(self) -> dict:
        """The stopping rule's fields (lab.measure.timing.StopRule), this search's cap per (impl, shape, mode)."""
        return {"rel_ci": self.rel_ci, "cap_s": self.cap_s, "min_samples": self.min_samples}

    @classmethod
    def from_args(cls, args) -> TuneParams:
        """From an argparse namespace built by add_tune_options; what it lacks keeps its default."""
        given = {o.name: getattr(args, o.name) for o in TUNE_OPTIONS if getattr(args, o.name, None) is not None}
        given.update({f: v for flag, (f, v, _) in TUNE_SWITCHES.items() if getattr(args, f"switch_{f}", False)})
        p = cls(**given)
        if p.gpus != "all" and not (str(p.gpus).isdigit() and int(p.gpus) >= 1):
            raise ValueError(f"--gpus / GPUS={p.gpus!r}: 'all' or a positive count")
        if p.knobs:
            from lab.studies.tuning.space import space

            space(p.variant).restricted(p.knobs)  # a ValueError names an unknown tunable
        return replace(p, gpus=str(p.gpus))

    def as_text(self) -> dict[str, str]:
        return {o.name: f"{getattr(self, o.name):g}" if isinstance(getattr(self, o.name), float)
                else str(getattr(self, o.name)) for o in TUNE_OPTIONS}


def add_tune_options(parser) -> None:
    """TUNE_OPTIONS' flags and TUNE_SWITCHES on an argparse parser, each with its default in the help."""
    defaults = TuneParams().as_text()
    for o in TUNE_OPTIONS:
        o.add_to(parser, defaults[o.name])
    for flag, (name, _, help_) in TUNE_SWITCHES.items():
        parser.add_argument(flag, dest=f"switch_{name}", action="store_true", help=help_)


def options_table(options, defaults: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """(make variable, flag, default, meaning) per option: what `make help` and docs/parameters.md show."""
    return [(o.make, o.flag, defaults[o.name], o.help) for o in options]


def main(argv: list[str] | None = None) -> int:
    """`make help`'s parameter lists, from the dataclasses' defaults."""
    for target, options, defaults in (("make ablation", RUN_OPTIONS, RunParams().as_text()),
                                      ("make tune", TUNE_OPTIONS, TuneParams().as_text())):
        print(f"{target} parameters (VAR=default):")
        for make, _, default, meaning in options_table(options, defaults):
            if make:
                print(f"  {make}={default}".ljust(42) + f" {meaning}")
    print("  TUNE_FLAGS=                               " + ", ".join(TUNE_SWITCHES) + " (make tune)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
