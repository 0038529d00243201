"""The kernel ladder's manifest (`kernels/variants/manifest.toml`) and the repository's paths.

The ladder as a tree (`manifest()`, `branches`, `branch_order`, `branch_ends`, `lineage`) and the
manifest's other tables, parsed in one place (`tables()`). Imported by `lab.kernels.build` and
`lab.kernels.variants` alike; it imports neither, so building and loading do not import each other
in a circle.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lab.kernels.shape import DEFAULT_DTYPE, DTYPES, KV_LAYOUTS, Shape, is_spec, not_taken

REPO = Path(__file__).resolve().parents[2]  # lab/kernels/manifest.py -> the repository root
KERNELS_DIR = REPO / "kernels"
VARIANTS_DIR = KERNELS_DIR / "variants"
MANIFEST_PATH = VARIANTS_DIR / "manifest.toml"

SUPPORTED_HEAD_DIMS = (64, 128)
MAX_GRID_YZ = 65535  # heads go to gridDim.y, batch to gridDim.z

# Profiler quantities a hypothesis may name (lab.measure.profile maps them onto Nsight Compute metrics).
METRICS = {
    "global_load_sectors_per_request": "global-load sectors per request",
    "shared_bank_conflicts": "shared-memory bank conflicts (loads + stores)",
    "stall_barrier": "warp stalls on barriers",
    "stall_long_scoreboard": "warp stalls on global/local memory (long scoreboard)",
    "stall_wait": "warp stalls on fixed-latency dependencies (wait)",
    "stall_mio_throttle": "warp stalls on a full MIO queue (shared memory, special math, barriers)",
    "tensor_pipe_active": "tensor pipe active, % of peak",
    "dram_throughput": "DRAM throughput, % of peak",
    "achieved_occupancy": "achieved occupancy",
    "sm_active_balance": "SMs' mean active cycles over the busiest SM's (1: no tail)",
}


@dataclass(frozen=True)
class Variant:
    """One step of the ladder, as the manifest describes it."""

    index: int  # 1-based position in the manifest (the file's number)
    name: str
    file: str
    parent: str  # an earlier step's name; "" for the first step
    title: str
    change: str
    hypothesis: str
    metric: str
    direction: str
    speedup: tuple[float, float]
    arch: str
    # The shape its hypothesis is judged at, "B,H,S,D" or "B,H,S,D,causal", for a step that
    # changes only some shapes (say, only D = 128); "" = the report's headline shape.
    judged_at: str = ""
    # The switchable twin (a branch end's source with knock-out switches, under kernels/): what a
    # configuration of this step (defines: a knock-out, a tuning trial) is built from, so that the
    # step's own file holds its one idea. "" = configurations build from the step's file.
    twin: str = ""
    # The inputs it takes (issue 22): its element types ("fp16", "bf16") and its K/V heads, "same"
    # (H_kv = H) or "grouped" (any H_kv dividing H, SDPA's enable_gqa mapping). A step without the
    # fields takes what every step took before them: fp16, as many K/V heads as query heads. The
    # library says the same through fa_dtypes() / fa_grouped_kv(), checked when it loads.
    dtypes: tuple[str, ...] = (DEFAULT_DTYPE,)
    kv_heads: str = "same"
    # The problem it solves (PROBLEMS): "prefill" (as many queries as keys, lab.kernels.attention's
    # call) or "decode" (1 to 8 new queries against a K/V cache, lab.kernels.decode_attention's). Each
    # problem's steps are a tree of their own, with their own root and branch ends.
    problem: str = "prefill"

    @property
    def branch(self) -> str:
        """The branch it is on: its arch for a prefill step ("portable", "sm_90a"), its problem for
        any other (the decode branch), so that a decode step never ends a prefill branch."""
        return self.arch if self.problem == PREFILL else self.problem

    def not_taken(self, shape: Shape) -> str:
        """Why this step cannot take `shape`'s element type or K/V heads, by its manifest; "" if it can."""
        return not_taken(f"variant {self.name!r}", self.dtypes, self.kv_heads, shape.dtype, shape.H, shape.H_kv)

    @property
    def path(self) -> Path:
        return VARIANTS_DIR / self.file

    def source(self, defines: dict | None = None, twin: bool | None = None) -> Path:
        """The file a build of this step compiles: the twin for a configuration (non-empty defines)
        where the step has one, else the step's file. twin=True/False forces the choice."""
        use_twin = bool(defines) if twin is None else twin
        if use_twin and not self.twin:
            if twin:
                raise ValueError(f"{self.name} has no switchable twin")
            return self.path
        return KERNELS_DIR / self.twin if use_twin else self.path


def judged_shape(v: Variant) -> Shape | None:
    """The shape of the manifest's judged_at, or None for the headline shape."""
    return Shape.parse(v.judged_at) if v.judged_at else None


PORTABLE = "portable"  # the arch of steps that build for sm_80 and newer
PREFILL, DECODE = "prefill", "decode"
PROBLEMS = (PREFILL, DECODE)  # what a step computes; the first step of each is a root (parent "")


def tables(text: str | None = None) -> dict:
    """The manifest's TOML (or `text`) parsed: its [[variant]] tables (read by manifest() below),
    [[switch]] and [[structural]] (lab.kernels.switches), [[tunable]] and [[tunable_limits]]
    (lab.studies.tuning.space). The one place the file is read."""
    return tomllib.loads(text if text is not None else MANIFEST_PATH.read_text())


@cache
def manifest() -> tuple[Variant, ...]:
    """All variants in manifest order, validated: names unique, the first step has no parent and
    every other names an earlier step (the ladder is a tree), files exist, fields are known."""
    entries = tables()["variant"]
    out: list[Variant] = []
    for i, entry in enumerate(entries, start=1):
        v = Variant(index=i, **{**entry, "speedup": tuple(entry["speedup"]),
                                **({"dtypes": tuple(entry["dtypes"])} if "dtypes" in entry else {})})
        if v.problem not in PROBLEMS:
            raise ValueError(f"manifest: {v.name!r} problem = {v.problem!r}: one of "
                             + ", ".join(f'"{p}"' for p in PROBLEMS))
        _check_parent(v, earlier={u.name: u.problem for u in out}, later={e.get("name") for e in entries[i:]})
        if not v.path.is_file():
            raise ValueError(f"manifest: {v.name!r} names {v.file}, which does not exist")
        if v.twin and not (KERNELS_DIR / v.twin).is_file():
            raise ValueError(f"manifest: {v.name!r} names the twin kernels/{v.twin}, which does not exist")
        if v.metric not in METRICS:
            raise ValueError(f"manifest: {v.name!r} names unknown metric {v.metric!r} (known: {sorted(METRICS)})")
        if v.judged_at and not is_spec(v.judged_at):
            raise ValueError(f"manifest: {v.name!r} judged_at must be 'B,H,S,D' or 'B,H,S,D,causal', "
                             f"not {v.judged_at!r}")
        if v.direction not in ("up", "down"):
            raise ValueError(f"manifest: {v.name!r} direction must be 'up' or 'down'")
        _check_inputs_fields(v)
        out.append(v)
    return tuple(out)


def _check_inputs_fields(v: Variant) -> None:
    """`dtypes`: known element types, fp16 among them (every step exports fa_forward, fp16 with
    H_kv = H), none twice; `kv_heads`: one of KV_LAYOUTS."""
    known = ", ".join(f'"{d}"' for d in DTYPES)
    if (not v.dtypes or any(d not in DTYPES for d in v.dtypes) or len(set(v.dtypes)) != len(v.dtypes)
            or DEFAULT_DTYPE not in v.dtypes):
        raise ValueError(f"manifest: {v.name!r} dtypes = {list(v.dtypes)}: a list of distinct element types among "
                         f"{known}, with \"{DEFAULT_DTYPE}\" in it (every step exports fa_forward, which takes fp16)")
    if v.kv_heads not in KV_LAYOUTS:
        raise ValueError(f"manifest: {v.name!r} kv_heads = {v.kv_heads!r}: one of "
                         + ", ".join(f'"{k}"' for k in KV_LAYOUTS)
                         + ' ("same": H_kv = H only; "grouped": any H_kv that divides H)')


def _check_parent(v: Variant, earlier: dict[str, str], later: set[str]) -> None:
    """The tree's one rule, per problem: the first step of a problem has parent "" (its root), every
    other names an earlier step of the same problem. `earlier`: the earlier steps' names -> problems."""
    if v.name in earlier:
        raise ValueError(f"manifest: step {v.index} is named {v.name!r} like an earlier step; names must be unique")
    if v.problem not in earlier.values():
        if v.parent:
            raise ValueError(f"manifest: the first {v.problem} step {v.name!r} has parent {v.parent!r}; it must have "
                             f'parent = "" (the root of the {v.problem} ladder)')
        return
    if earlier.get(v.parent) == v.problem:
        return
    if not v.parent:
        where = f'parent = "", which only the first {v.problem} step may have'
    elif v.parent in earlier:
        where = f"parent {v.parent!r}, a {earlier[v.parent]} step (a step's parent solves its problem)"
    elif v.parent == v.name:
        where = f"parent {v.parent!r}, itself"
    elif v.parent in later:
        where = f"parent {v.parent!r}, which comes later in the manifest"
    else:
        where = f"parent {v.parent!r}, which is not a step of the manifest"
    raise ValueError(f"manifest: {v.name!r} (step {v.index}) has {where}; a step's parent must be an earlier "
                     "step of the manifest that solves the same problem")


def names(problem: str | None = PREFILL) -> list[str]:
    """Variant names in manifest order: the prefill ladder's (what the study times on its prefill
    shapes, the default), another problem's, or every step (problem=None)."""
    return [v.name for v in manifest() if problem is None or v.problem == problem]


# --- the ladder as a tree: branches and lineages -------------------------------------------
#
# A branch is the prefill steps of one `arch` ("portable", "sm_90a", ...), or the steps of another
# problem ("decode": Variant.branch). Branches come in the order of
# their first step in the manifest, and a branch's steps in manifest order; a branch may start
# from a step of another (wgmma, the first sm_90a step, has the portable async_pipeline as its
# parent) and a later step may continue an earlier branch after another branch's steps.


def branch(name: str) -> str:
    """The branch of step `name` (Variant.branch: its arch, or its problem where not prefill)."""
    return get(name).branch


def branches(variant_names: list[str] | None = None) -> dict[str, list[str]]:
    """branch -> its steps among `variant_names` (default: the prefill steps), branches in order of
    first appearance in the manifest, each branch's steps in manifest order."""
    wanted = set(names() if variant_names is None else variant_names)
    out: dict[str, list[str]] = {}
    for v in manifest():
        if v.name in wanted:
            out.setdefault(v.branch, []).append(v.name)
    return out


def branch_order(variant_names: list[str] | None = None) -> list[str]:
    """`variant_names` (default: all) grouped by branch: every step of the first branch, then of
    the next, each in manifest order. Names the manifest lacks are left out."""
    return [n for steps in branches(variant_names).values() for n in steps]


def lineage(name: str) -> list[str]:
    """The steps from the root of the ladder to `name`, both included, each the parent of the next."""
    chain = [get(name)]
    while chain[-1].parent:
        chain.append(get(chain[-1].parent))
    return [v.name for v in reversed(chain)]


def branch_ends(variant_names: list[str]) -> list[str]:
    """The last of the given steps on each branch of the ladder (Variant.branch: a target arch, or
    the decode branch), in branch order: the kernels a user would pick from each branch."""
    ends: dict[str, str] = {}
    for name in sorted(variant_names, key=lambda n: get(n).index):
        ends[get(name).branch] = name
    return list(ends.values())


def headline_end(variant_names: list[str]) -> str:
    """The branch end a run's single-kernel studies (A/A twin, factorial) go to: the arch-specific
    branch's end where the run has it (the fastest kernel on its GPU), else the portable end."""
    ends = [n for n in branch_ends(variant_names) if get(n).problem == PREFILL]  # never the decode end
    specific = [n for n in ends if get(n).arch != PORTABLE]
    return (specific or ends or [""])[-1]


def tuned_kernel() -> str:
    """The step the manifest's [[tunable]] tables name: the sm_90a branch's end, whose switchable
    twin takes the tile constants. Tuning, the tuned dispatch and the factorial default to it, so a
    new branch end moves them by its manifest entries alone. A ValueError if the tables name none
    or several."""
    named = sorted({t.get("variant", "") for t in tables().get("tunable", [])})
    if len(named) != 1 or named[0] not in names():
        raise ValueError(f"manifest: the [[tunable]] tables must name one known step, not {named}")
    return named[0]


def get(name: str) -> Variant:
    for v in manifest():
        if v.name == name:
            return v
    raise KeyError(f"unknown variant {name!r}; known: {', '.join(names())}")
