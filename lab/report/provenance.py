"""Where the report's code and numbers come from: the run's folder, whether the kernel sources in this tree still hash
as the run built them, and each step's diff against its parent."""

from __future__ import annotations

import difflib

from lab.report.load import RunData, manifest_variant


def _any_variant(name):
    """A step of the manifest by its name, of any problem (prefill or decode); None where it has none."""
    from lab.kernels import variants

    try:
        return variants.get(name)
    except Exception:  # noqa: BLE001 - an unknown name or a broken manifest leaves the check out, not the report
        return None


def source_check(data: RunData) -> tuple[list[str], list[str]]:
    """Variants whose working-tree sources hash as the run's build.json says, and those that differ."""
    return sources_against(data.variants, data.build)


def sources_against(names: list[str], builds: dict) -> tuple[list[str], list[str]]:
    """Of `names`, those whose working-tree sources hash as `builds` (a build record by variant: build.json's,
    or decode.json's "builds") says, and those that differ; a name without a recorded hash is in neither."""
    same, differ = [], []
    try:
        from lab.kernels import build

        for name in names:
            v = _any_variant(name)
            rec_hash = (builds.get(name) or {}).get("source_hash")
            if v is None or not rec_hash:
                continue
            (same if build.source_hash(v) == rec_hash else differ).append(name)
    except Exception:  # noqa: BLE001 - a check that cannot run is left out
        pass
    return same, differ


def changed_files(data: RunData, names: list[str]) -> list[str]:
    """The files (under kernels/) whose hash differs from the one the run's build.json records for
    them, over the variants `names`; [] where the run recorded no per-file hashes (runs before them)."""
    return files_changed_against(names, data.build)


def files_changed_against(names: list[str], builds: dict) -> list[str]:
    """changed_files over any build records by variant (build.json's, decode.json's "builds")."""
    changed = set()
    try:
        from lab.kernels import build

        for name in names:
            v, recorded = _any_variant(name), (builds.get(name) or {}).get("source_files")
            if v is None or not isinstance(recorded, dict) or not recorded:
                continue
            now = build.source_files(v)
            changed |= {f for f in recorded.keys() | now.keys() if recorded.get(f) != now.get(f)}
    except Exception:  # noqa: BLE001 - a check that cannot run is left out
        return []
    return sorted(changed)


def run_path(data: RunData) -> str:
    from lab.kernels.variants import REPO

    try:
        return str(data.rec.dir.resolve().relative_to(REPO)) + "/"
    except ValueError:
        return str(data.rec.dir) + "/"


def step_diffs(data: RunData) -> list[dict]:
    out = []
    for name in data.variants:
        v = manifest_variant(name)
        if v is None or not v.parent:
            continue
        p = manifest_variant(v.parent)
        if p is None or not v.path.is_file() or not p.path.is_file():
            out.append(dict(variant=name, parent=v.parent, title=v.title, lines=[], note="source file missing"))
            continue
        lines = list(difflib.unified_diff(p.path.read_text().splitlines(), v.path.read_text().splitlines(),
                                          fromfile=f"kernels/variants/{p.file}", tofile=f"kernels/variants/{v.file}",
                                          lineterm="", n=3))
        added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
        removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
        out.append(dict(variant=name, parent=v.parent, title=v.title, lines=lines, added=added, removed=removed,
                        index=v.index, note=""))
    return out
