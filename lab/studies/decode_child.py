"""One GPU's part of a run's decode timing, in a process of its own (lab.studies.decode_study starts one a GPU
where a run has several, through lab.studies.gpu_share.run_children). It loads the decode steps it is given
(built already: cache hits), measures its GPU's copy bandwidth, then times the shapes it is given (their
1-based indices in the run's DECODE, each with the seed the one-process set gives it) exactly as the
one-process set does, says each shape it finishes (gpu_share.TICK), and rewrites --out after each shape
so that a child lost midway keeps what it measured.

    python -m lab.studies.decode_child RUN_DIR --shapes 1,5,9 --steps a,b --out FILE
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from lab.cli import OneLineParser
from lab.studies.gpu_share import TICK


def time_part(rec, indices: list[int], steps: list[str], out: Path, say=print, build=None, measure=None,
              copy=None, peers=None) -> int:
    """Time the run's decode shapes `indices` (1-based) with the decode `steps` and the run's peers; write
    {"gpu", "copy", "shapes": [index, ...] finished, "results": {index: {"samples", "rows", "notes"}},
    "errors": {step: why not loaded}} to `out` after each shape. The number of shapes timed. The stand-ins
    are decode_study.run's."""
    from lab.studies import decode_study
    from lab.studies.params import RunParams

    p = RunParams.read(rec)
    shapes = p.decode_shapes
    bad = [i for i in indices if not 1 <= i <= len(shapes)]
    if bad:
        raise ValueError(f"--shapes {bad}: the run's DECODE has shapes 1 to {len(shapes)}")
    kernels, errors = {}, {}
    for name, (fn, summary) in (build or decode_study.gpu_build)(steps, say).items():
        if fn is None:
            errors[name] = f"not loaded: {summary.get('error', '')[:500]}"
        else:
            kernels[name] = fn
    got = {"gpu": os.environ.get("CUDA_VISIBLE_DEVICES", ""), "copy": (copy or decode_study.gpu_copy)(),
           "shapes": [], "results": {}, "errors": errors}
    out.write_text(json.dumps(got, default=_plain))
    measure = measure or decode_study.gpu_measure
    peers = decode_study.gpu_peers(p) if peers is None else peers
    clocks = decode_study.gpu_clocks() if measure is decode_study.gpu_measure else None
    for i in indices:
        shape = shapes[i - 1]
        say(f"decode shape {i} of {len(shapes)}: {shape}")
        samples, rows, notes = decode_study.measure_one(measure, shape, kernels, peers, p, clocks, rec.run_id, i, say)
        got["results"][str(i)] = {"samples": samples, "rows": rows, "notes": {**notes, "gpu": got["gpu"]}}
        got["shapes"].append(i)
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
    ap.add_argument("--steps", required=True, help="the decode steps to time (built and checked), comma-separated")
    ap.add_argument("--out", required=True, help="the file the part's results are written to (JSON)")
    args = ap.parse_args(argv)
    try:
        indices = [int(x) for x in args.shapes.split(",") if x.strip()]
    except ValueError:
        ap.error(f"--shapes {args.shapes!r}: comma-separated shape numbers (1-based)")
    say = lambda s: print(s, flush=True)  # noqa: E731
    rec = records.RunRecord.open(str(Path(args.run_dir).resolve()))
    try:
        time_part(rec, indices, [s for s in args.steps.split(",") if s], Path(args.out), say)
    except ValueError as exc:
        ap.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
