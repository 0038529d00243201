"""One GPU's part of a run's decode set, in a process of its own (lab.studies.decode_study starts one a GPU
where a run has several, through lab.studies.gpu_share.run_children). It loads the decode steps it is given
(built already: cache hits), measures its GPU's copy bandwidth, runs the check cases it is given (indices
into decode_study.check_cases), then times the shapes it is given (their 1-based indices in the run's
DECODE, each with the seed the one-process set gives it) with the steps that passed its checks, exactly as
the one-process set does; it says each shape it finishes (gpu_share.TICK) and rewrites --out after its
checks and after each shape, so that a child lost midway keeps what it measured. The stage leaves out the
rows of a step that failed a check in another child.

    python -m lab.studies.decode_child RUN_DIR --checks 0,4,8 --shapes 1,5,9 --steps a,b --out FILE
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from lab.cli import OneLineParser
from lab.studies.gpu_share import TICK


def time_part(rec, indices: list[int], steps: list[str], out: Path, say=print, build=None, measure=None,
              copy=None, peers=None, check=None, checks: list[int] = ()) -> int:
    """Check the run's decode check cases `checks` (indices into decode_study.check_cases over `steps`), then time
    its decode shapes `indices` (1-based) with those of `steps` that passed here and the run's peers; write
    {"gpu", "copy", "checks": {k: result}, "check_ids": {k: case id}, "shapes": [index, ...] finished,
    "results": {index: {"samples", "rows", "notes"}}, "errors": {step: why not loaded}, "seconds"} to `out`
    after its checks and after each shape. The number of shapes timed. The stand-ins are decode_study.run's."""
    import time

    from lab.studies import decode_study
    from lab.studies.params import RunParams

    p = RunParams.read(rec)
    shapes = p.decode_shapes
    bad = [i for i in indices if not 1 <= i <= len(shapes)]
    if bad:
        raise ValueError(f"--shapes {bad}: the run's DECODE has shapes 1 to {len(shapes)}")
    cases = decode_study.check_cases(p, steps, decode_study.branch_end())
    if bad := [k for k in checks if not 0 <= k < len(cases)]:
        raise ValueError(f"--checks {bad}: the run has check cases 0 to {len(cases) - 1} for these steps")
    kernels, errors = {}, {}
    for name, (fn, summary) in (build or decode_study.gpu_build)(steps, say).items():
        if fn is None:
            errors[name] = f"not loaded: {summary.get('error', '')[:500]}"
        else:
            kernels[name] = fn
    got = {"gpu": os.environ.get("CUDA_VISIBLE_DEVICES", ""), "copy": (copy or decode_study.gpu_copy)(),
           "checks": {}, "check_ids": {}, "shapes": [], "results": {}, "errors": errors, "seconds": {}}
    t0 = time.perf_counter()
    for k in checks:
        step, shape, index = cases[k]
        if step in kernels:
            got["checks"][str(k)] = (check or decode_study.gpu_check)(step, kernels[step], shape, index)
            got["check_ids"][str(k)] = decode_study.case_id(cases[k])
    failed = {cases[int(k)][0] for k, r in got["checks"].items() if not r.get("passed")}
    kernels = {n: fn for n, fn in kernels.items() if n not in failed}
    got["seconds"]["checks"] = round(time.perf_counter() - t0, 2)
    out.write_text(json.dumps(got, default=_plain))
    say(f"decode: {len(got['checks'])} checks here" + (f"; failing: {', '.join(sorted(failed))}" if failed else ""))
    measure = measure or decode_study.gpu_measure
    peers = decode_study.gpu_peers(p) if peers is None else peers
    clocks = decode_study.gpu_clocks() if measure is decode_study.gpu_measure else None
    t1 = time.perf_counter()
    for i in indices:
        shape = shapes[i - 1]
        say(f"decode shape {i} of {len(shapes)}: {shape}")
        samples, rows, notes = decode_study.measure_one(measure, shape, kernels, peers, p, clocks, rec.run_id, i, say)
        got["results"][str(i)] = {"samples": samples, "rows": rows, "notes": {**notes, "gpu": got["gpu"]}}
        got["shapes"].append(i)
        got["seconds"]["timing"] = round(time.perf_counter() - t1, 2)
        out.write_text(json.dumps(got, default=_plain))
        say(TICK + shape.id)
    return len(got["shapes"])


def _plain(value):
    """A NumPy scalar in a sample or summary row as the Python number JSON takes."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def main(argv: list[str] | None = None) -> int:
    from lab.measure import records

    ap = OneLineParser(prog="python -m lab.studies.decode_child",
                       description="one GPU's part of a run's decode timing (the decode set runs these)")
    ap.add_argument("run_dir")
    ap.add_argument("--shapes", required=True, help="the run's decode shapes to time, 1-based, comma-separated")
    ap.add_argument("--steps", required=True, help="the decode steps that built, comma-separated")
    ap.add_argument("--checks", default="", help="the check cases to run first (indices into the stage's list), "
                    "comma-separated")
    ap.add_argument("--out", required=True, help="the file the part's results are written to (JSON)")
    args = ap.parse_args(argv)
    try:
        indices = [int(x) for x in args.shapes.split(",") if x.strip()]
        checks = [int(x) for x in args.checks.split(",") if x.strip()]
    except ValueError:
        ap.error(f"--shapes {args.shapes!r} / --checks {args.checks!r}: comma-separated numbers")
    say = lambda s: print(s, flush=True)  # noqa: E731
    rec = records.RunRecord.open(str(Path(args.run_dir).resolve()))
    try:
        time_part(rec, indices, [s for s in args.steps.split(",") if s], Path(args.out), say, checks=checks)
    except ValueError as exc:
        ap.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
