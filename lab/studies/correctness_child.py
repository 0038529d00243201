"""One GPU's part of a run's correctness grid, in a process of its own (the correctness stage starts one a GPU
where a run has several: lab.studies.gpu_share). It checks cases K, K + N, ... of the run's grid with every
kernel that built, says each case it finishes (gpu_share.TICK), and writes the cases and their results
(lab.measure.check.as_records) to --out. With --peers it checks cases K, K + N, ... of the peers' grid with
the run's peers instead (lab.studies.peer_check).

    python -m lab.studies.correctness_child RUN_DIR --part K --parts N --out FILE
    python -m lab.studies.correctness_child RUN_DIR --peers --part K --parts N --out FILE
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lab.cli import OneLineParser
from lab.studies.gpu_share import TICK, shares


def check_part(rec, part: int, parts: int, out: Path, say=print, peers: bool = False) -> int:
    """Part `part` of `parts` of the run's grid (its CHECK: full or quick) with its kernels, or of the peers'
    grid with its peers (`peers`), written to `out`; the number of cases."""
    from lab.measure import check as checks
    from lab.studies import peer_check, stages
    from lab.studies.params import RunParams

    if peers:
        cases = shares(checks.peer_grid(), parts)[part]
        kernels = {peer.name: checks.peer_as_attn(peer) for peer in peer_check.checked(rec)}
    else:
        mode = RunParams.read(rec).check
        cases = shares(checks.grid() if mode == "full" else checks.small_grid(), parts)[part]
        kernels = stages.loaded_kernels(rec)
    results = checks.run_grid(kernels, cases, progress=say, tick=lambda case: say(TICK + case))
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
    ap.add_argument("--peers", action="store_true", help="the peers' grid with the run's peers, not the kernels'")
    args = ap.parse_args(argv)
    if not 0 <= args.part < args.parts:
        ap.error(f"--part {args.part}: from 0 to --parts - 1 ({args.parts - 1})")
    say = lambda s: print(s, flush=True)  # noqa: E731
    check_part(records.RunRecord.open(str(Path(args.run_dir).resolve())), args.part, args.parts, Path(args.out), say,
               args.peers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
