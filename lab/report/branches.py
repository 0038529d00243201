"""The ladder's branches in a run: which steps ran on the measured GPU (and why the others did
not), the fastest portable step and the step the report judges, and how to name them in a sentence.

The ladder is a tree (lab.kernels.manifest): a branch is the steps of one `arch`, and the report shows
each branch in its own order (RunData.variants is in lab.kernels.manifest.branch_order). The best step
overall is the end of an arch-specific branch (sm_90a) when the run measured that branch, that is
on a GPU that builds it; otherwise it is the best portable step, the fastest portable step at the
headline shape in hot mode. Everything here comes from the run's files and the manifest.
"""

from __future__ import annotations

import re

from lab.kernels import manifest
from lab.kernels.manifest import PORTABLE
from lab.kernels.shape import Shape
from lab.report.formats import index_runs
from lab.report.load import RunData, first_line, manifest_variant


def branch(name: str) -> str:
    """The step's arch branch from the manifest (`portable`, `sm_90a`, ...); '' if not a manifest step."""
    return manifest.branch(name) if manifest_variant(name) else ""


def steps(data: RunData) -> list[str]:
    """The run's manifest steps, in branch order."""
    return [v for v in data.variants if manifest_variant(v) is not None]


def ran(data: RunData) -> list[str]:
    """The run's steps with samples, in branch order: what ran on the measured GPU."""
    timed = set(data.impls(studies=True))
    return [v for v in steps(data) if v in timed]


def not_run(data: RunData) -> dict[str, str]:
    """Each step of the run without samples -> why: the build's error as build.json records it
    ("not built: ... needs sm_90a ..., this GPU is sm_89" for an arch-specific step elsewhere),
    else the reason excluded.json gives (a failed correctness check), else 'no samples'."""
    timed = set(ran(data))
    out = {}
    for v in steps(data):
        if v in timed:
            continue
        built = data.build.get(v) if isinstance(data.build, dict) else None
        if isinstance(built, dict) and not built.get("ok", True):
            out[v] = first_line(built.get("error") or "build failed (no reason recorded)")
        elif v in data.excluded:
            out[v] = first_line(data.excluded[v])
        else:
            out[v] = "no samples in this run"
    return out


def not_asked(data: RunData) -> list[str]:
    """The tree's prefill steps that the run was not asked to measure (absent from params.json's variants), in
    manifest order: steps added after the run, or left out by its VARIANTS. [] where the run names no variants."""
    asked = set(data.params.get("variants") or [])
    return [v for v in manifest.names() if v not in asked] if asked else []


def not_run_grouped(data: RunData) -> list[tuple[list[str], str]]:
    """not_run's steps grouped by reason, the step's own name in it said as 'the step' (ten sm_90a
    steps refused on one GPU share one line), in branch order."""
    groups: dict[str, list[str]] = {}
    for v, why in not_run(data).items():
        groups.setdefault(re.sub(rf"\b{re.escape(v)}\b", "the step", why, count=1), []).append(v)
    return [(names, why) for why, names in groups.items()]


def _fastest(data: RunData, names: list[str], shape: Shape | None, mode: str) -> str:
    timed = [v for v in names if shape is not None and data.median(v, shape, mode) is not None]
    return min(timed, key=lambda v: (data.median(v, shape, mode), manifest_variant(v).index)) if timed else ""


def best_portable(data: RunData, shape: Shape | None = None, mode: str = "hot") -> str:
    """The fastest portable step at `shape` (default: the headline shape) in `mode`; where no
    portable step was timed there, the last portable step timed anywhere (the branch's end);
    '' if the run timed no portable step."""
    shape = shape or data.headline()
    portable = [v for v in ran(data) if branch(v) == PORTABLE]
    return _fastest(data, portable, shape, mode) or portable_end(data)


def ends(data: RunData, shape: Shape | None = None, mode: str = "hot") -> list[str]:
    """The last timed step of each branch, in branch order: lab.kernels.manifest.branch_ends of the
    steps with samples (anywhere, or at `shape` in `mode`)."""
    timed = ran(data) if shape is None else [v for v in steps(data) if data.lat(v, shape, mode) is not None]
    return manifest.branch_ends(timed)


def portable_end(data: RunData) -> str:
    """The last timed step of the portable branch ('' where none was timed): the portable kernel a
    user would pick, judged against FlashAttention-2 in the report."""
    return next((v for v in ends(data) if branch(v) == PORTABLE), "")


def arch_specific_end(data: RunData) -> str:
    """The last timed step of the run's arch-specific branch ('' where none of its steps was
    timed, as on a GPU that cannot build them); of several such branches, the last one."""
    return next((v for v in reversed(ends(data)) if branch(v) != PORTABLE), "")


def best_step(data: RunData) -> str:
    """The best step overall: the end of the arch-specific branch when it was measured, else the
    best portable step ('' if no step was timed)."""
    return arch_specific_end(data) or best_portable(data)


def role(data: RunData, name: str, short: bool = False) -> str:
    """What makes `name` the step the report judges (best_step), in words: 'the end of the sm_90a
    branch', or 'the fastest portable step' (saying why no arch-specific step is judged where the run
    has some, unless `short`). One meaning each: a branch's end is its last step, the fastest step is
    the one with the lowest median at the headline shape."""
    arch = branch(name)
    if arch and arch != PORTABLE:
        return f"the end of the {arch} branch" if not short else f"{arch} branch end"
    missing = sorted({branch(v) for v in not_run(data) if branch(v) not in ("", PORTABLE)})
    why = f"; no {' or '.join(missing)} step ran on this GPU" if missing and not short else ""
    return f"the fastest portable step{why}" if not short else "fastest portable step"


def numbers(names: list[str]) -> str:
    """The manifest numbers of `names` with runs collapsed: '1–8, 19–20'."""
    return index_runs([manifest_variant(n).index for n in names if manifest_variant(n)])


def summary(names: list[str]) -> str:
    """The branches of `names` in words, each with its step numbers and where it branches off:
    'portable steps 1–8, then sm_90a steps 9–18 branching off 8 async_pipeline'."""
    by_branch: dict[str, list[str]] = {}
    for n in names:
        if manifest_variant(n):
            by_branch.setdefault(branch(n), []).append(n)
    parts = []
    for arch, members in by_branch.items():
        root = manifest_variant(members[0]).parent
        origin = f" branching off {label(root)}" if root and manifest_variant(root) and branch(root) != arch else ""
        parts.append(f"{arch} step{'s' if len(members) > 1 else ''} {numbers(members)}{origin}")
    return ", then ".join(parts)


def lineage(name: str) -> list[str]:
    """The steps from the ladder's root to `name` (lab.kernels.manifest.lineage); [name] for a step the
    manifest lacks."""
    return manifest.lineage(name) if manifest_variant(name) else [name]


def first_timed_ancestor(data: RunData, name: str, shape: Shape, mode: str = "hot") -> str:
    """The first step of `name`'s lineage timed at `shape` (`name` itself if none is): where the
    whole-ladder speedup of `name` starts."""
    return next((v for v in lineage(name) if data.median(v, shape, mode) is not None), name)


def label(name: str) -> str:
    """'18 ftz_exp2': the step's number and name."""
    v = manifest_variant(name)
    return f"{v.index} {name}" if v else name
