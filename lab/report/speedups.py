"""One implementation's paired speedups over others at every shape and mode a recorded run timed both, read without a
GPU (lab.report.load.RunData.speedup: round by round, 95 % intervals over the replicates, as the report computes
them; > 1: the first faster). A landing's check folder keeps these tables: a step over its parent, the sm_90a end
against FA3 and cuDNN, the end over step 35 at the canonical rows (issue 46's target 4).

    python -m lab.report.speedups RUN STEP                                  # over its parent (the manifest's)
    python -m lab.report.speedups RUN END flash_attn3 sdpa_cudnn --shapes large,long,models --modes hot,sustained
    python -m lab.report.speedups RUN END longest_first_queue --shapes canonical --modes hot --at-least 0.98
"""

from __future__ import annotations

import sys
from pathlib import Path

from lab.cli import OneLineParser
from lab.kernels import manifest
from lab.measure import records
from lab.report.load import RunData
from lab.studies.params import MODES


def table(run_id: str, impl: str, bases: list[str] | None = None, shapes: str | None = None,
          modes: list[str] | None = None, at_least: float | None = None, root: Path | None = None) -> list[str]:
    """The lines `python -m lab.report.speedups` prints: a header, then a row a (shape, mode) where some base was timed
    beside `impl` (bases: default the manifest's parent of `impl`; shapes: a lab.studies.shapes spec, default the
    run's own; modes: default all three), each base's speedup with its interval or "-"; with `at_least`, a last
    column saying "below" where a point is under it. ValueError where the run, an implementation, a shape spec or
    a mode is not there."""
    from lab.studies.shapes import shapes_from

    if run_id not in records.list_runs(root):
        raise ValueError(f"run {run_id!r}: no such run under {root or records.RUNS_DIR}")
    data = RunData(records.RunRecord.open(run_id, root))
    if not bases:
        try:
            parent = manifest.get(impl).parent
        except KeyError:
            parent = ""
        if not parent:
            raise ValueError(f"{impl!r} has no parent in the manifest: name what to compare it with")
        bases = [parent]
    timed = set(data.impls(studies=True))
    for name in [impl, *bases]:
        if name not in timed:
            raise ValueError(f"{name!r}: not an implementation run {run_id} timed (it timed {len(timed)}: "
                             f"{', '.join(sorted(timed)[:8])}{', ...' if len(timed) > 8 else ''})")
    modes = list(modes or MODES)
    if bad := [m for m in modes if m not in MODES]:
        raise ValueError(f"--modes {','.join(bad)}: a mode is one of {', '.join(MODES)}")
    rows_of = shapes_from(shapes) if shapes else data.shapes
    width = max([len(str(s)) for s in rows_of] + [5])
    lines = [f"{impl} over {', '.join(bases)}, run {run_id} (> 1: {impl} faster)",
             f"{'shape':{width}s} {'mode':9s} " + " ".join(f"{'vs ' + b:>26s}" for b in bases)
             + ("  at least " + f"{at_least:g}" if at_least is not None else "")]
    for shape in rows_of:
        for mode in modes:
            cis = [data.speedup(impl, b, shape, mode) for b in bases]
            if not any(cis):
                continue
            cells = [f"{ci.ratio:.3f}x [{ci.lo:.3f}, {ci.hi:.3f}]" if ci else "-" for ci in cis]
            line = f"{str(shape):{width}s} {mode:9s} " + " ".join(f"{c:>26s}" for c in cells)
            if at_least is not None:
                line += "  below" if any(ci and ci.ratio < at_least for ci in cis) else "  ok"
            lines.append(line)
    if len(lines) == 2:
        lines.append("(no shape and mode where the run timed both)")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m lab.report.speedups", description=__doc__.splitlines()[0])
    ap.add_argument("run", help="a run id under data/runs")
    ap.add_argument("impl", help="the implementation whose speedups are read (a step, a knock-out, a peer)")
    ap.add_argument("bases", nargs="*", help="what it is compared with (default: its parent in the manifest)")
    ap.add_argument("--shapes", help="a shape spec (set names such as large,long,models, or shapes joined by ';'); "
                                     "default: the run's")
    ap.add_argument("--modes", default=",".join(MODES), help=f"modes, comma-separated (default: {','.join(MODES)})")
    ap.add_argument("--at-least", type=float, help="mark the rows whose point is under this speedup")
    args = ap.parse_args(argv)
    try:
        print("\n".join(table(args.run, args.impl, args.bases, args.shapes, args.modes.split(","), args.at_least)))
    except ValueError as exc:
        ap.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
