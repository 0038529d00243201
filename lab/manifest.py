"""The kernel ladder's manifest (`kernels/variants/manifest.toml`) and the repository's paths.

Imported by `lab.build` and `lab.variants` alike; it imports neither, so building and loading
do not import each other in a circle.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KERNELS_DIR = REPO / "kernels"
VARIANTS_DIR = KERNELS_DIR / "variants"
MANIFEST_PATH = VARIANTS_DIR / "manifest.toml"

SUPPORTED_HEAD_DIMS = (64, 128)
MAX_GRID_YZ = 65535  # heads go to gridDim.y, batch to gridDim.z

# Profiler quantities a hypothesis may name (lab.profile maps them onto Nsight Compute metrics).
METRICS = {
    "global_load_sectors_per_request": "global-load sectors per request",
    "shared_bank_conflicts": "shared-memory bank conflicts (loads + stores)",
    "stall_barrier": "warp stalls on barriers",
    "stall_long_scoreboard": "warp stalls on global/local memory (long scoreboard)",
    "stall_wait": "warp stalls on fixed-latency dependencies (wait)",
    "tensor_pipe_active": "tensor pipe active, % of peak",
    "dram_throughput": "DRAM throughput, % of peak",
    "achieved_occupancy": "achieved occupancy",
}


@dataclass(frozen=True)
class Variant:
    """One step of the ladder, as the manifest describes it."""

    index: int  # 1-based position in the chain
    name: str
    file: str
    parent: str  # "" for the first step
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

    @property
    def path(self) -> Path:
        return VARIANTS_DIR / self.file


def _is_shape_spec(spec: str) -> bool:
    parts = [p.strip() for p in spec.split(",")]
    return len(parts) in (4, 5) and all(p.isdigit() for p in parts[:4]) and (len(parts) == 4 or parts[4] == "causal")


def judged_shape(v: Variant) -> tuple[int, int, int, int, bool] | None:
    """(B, H, S, D, causal) of the manifest's judged_at, or None for the headline shape."""
    if not v.judged_at:
        return None
    parts = [p.strip() for p in v.judged_at.split(",")]
    return (*(int(p) for p in parts[:4]), len(parts) == 5)


@cache
def manifest() -> tuple[Variant, ...]:
    """All variants in chain order, validated (parents chain, files exist, fields are known)."""
    raw = tomllib.loads(MANIFEST_PATH.read_text())
    out = []
    for i, entry in enumerate(raw["variant"], start=1):
        v = Variant(index=i, **{**entry, "speedup": tuple(entry["speedup"])})
        expected_parent = out[-1].name if out else ""
        if v.parent != expected_parent:
            raise ValueError(f"manifest: {v.name!r} has parent {v.parent!r}, expected {expected_parent!r}")
        if not v.path.is_file():
            raise ValueError(f"manifest: {v.name!r} names {v.file}, which does not exist")
        if v.metric not in METRICS:
            raise ValueError(f"manifest: {v.name!r} names unknown metric {v.metric!r} (known: {sorted(METRICS)})")
        if v.judged_at and not _is_shape_spec(v.judged_at):
            raise ValueError(f"manifest: {v.name!r} judged_at must be 'B,H,S,D' or 'B,H,S,D,causal', "
                             f"not {v.judged_at!r}")
        if v.direction not in ("up", "down"):
            raise ValueError(f"manifest: {v.name!r} direction must be 'up' or 'down'")
        out.append(v)
    return tuple(out)


def names() -> list[str]:
    """Variant names in chain order."""
    return [v.name for v in manifest()]


def branch_ends(variant_names: list[str]) -> list[str]:
    """The last of the given steps on each branch of the ladder (a branch = one target arch), in
    chain order: the kernels a user would pick from each branch."""
    ends: dict[str, str] = {}
    for name in variant_names:
        ends[get(name).arch] = name
    return list(ends.values())


def get(name: str) -> Variant:
    for v in manifest():
        if v.name == name:
            return v
    raise KeyError(f"unknown variant {name!r}; known: {', '.join(names())}")
