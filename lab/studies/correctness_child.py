"""One GPU's part of a run's correctness grid, in a process of its own (the correctness stage starts one a GPU
where a run has several: lab.studies.gpu_share). It checks cases K, K + N, ... of the run's grid with every
kernel that built, says each case it finishes (gpu_share.TICK), and writes the cases and their results
(lab.measure.check.as_records) to --out.

    python -m lab.studies.correctness_child RUN_DIR --part K --parts N --out FILE
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lab.cli import OneLineParser
from lab.studies.gpu_share import TICK, shares


def check_part(rec, part: int, parts: int, out: Path, say=print) -> int:
    """Part `part` of `parts` of the run's grid (its CHECK: full or quick), written to `out`; the number
    of cases."""
    from lab.measure import check as checks
    from lab.studies import stages
    from lab.studies.params import RunParams

    mode = RunParams.read(rec).check
    cases = shares(checks.grid() if mode == "full" else checks.small_grid(), parts)[part]
    results = checks.run_grid(stages.loaded_kernels(rec), cases, progress=say, tick=lambda case: say(TICK + case))
    out.write_text(json.dumps({"cases": [c.id for c in cases], "results": checks.as_records(results)}))
    return len(cases)


def main(argv: list[str] | None = None) -> int:
    from lab.measure import records

    ap = OneLineParser(prog="python -m lab.studies.correctness_child",
                       description="one GPU's part of a run's correctness grid (the correctness stage runs these)")
    ap.add_argument("run_dir")
    ap.add_argument("--part", type=int, required=True)
    ap.add_argument("--parts", type=int, required=True)
    ap.add_argument("--out", required=True, help="the file the part's results are written to (JSON)")
    args = ap.parse_args(argv)
    if not 0 <= args.part < args.parts:
        ap.error(f"--part {args.part}: from 0 to --parts - 1 ({args.parts - 1})")
    say = lambda s: print(s, flush=True)  # noqa: E731
    check_part(records.RunRecord.open(str(Path(args.run_dir).resolve())), args.part, args.parts, Path(args.out), say)
    return 0


if __name__ == "__main__":
    sys.exit(main())
