"""Issue 46's targets on a recorded run, read without a GPU: what the report's "Against FlashAttention-3" block says
(lab.report.sections.reference.targets), then every row a target judges with its speedup in each replicate alone
beside the run's (a landing's first reading: which rows a replicate carries, which are a replicate's spread).

    python -m lab.report.targets RUN [--step NAME]     (NAME: default the run's sm_90a end)
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from lab.cli import OneLineParser
from lab.measure import records
from lab.report import branches
from lab.report.load import RunData
from lab.report.sections import reference


def replicate_alone(folder: Path, replicate: int, tmp: Path) -> RunData:
    """The run with one replicate's samples: a copy of its folder under `tmp` whose samples.parquet holds them alone."""
    import pandas as pd

    copy = tmp / f"r{replicate}" / folder.name
    shutil.copytree(folder, copy)
    samples = pd.read_parquet(copy / "samples.parquet")
    samples[records.with_replicate(samples)["replicate"] == replicate].to_parquet(copy / "samples.parquet")
    return RunData(records.RunRecord.open(copy.name, copy.parent))


def report(run_id: str, step: str | None = None, root: Path | None = None) -> list[str]:
    """The lines `python -m lab.report.targets` prints (ValueError where the run or the step is not there)."""
    if run_id not in records.list_runs(root):
        raise ValueError(f"run {run_id!r}: no such run under {root or records.RUNS_DIR}")
    whole = RunData(records.RunRecord.open(run_id, root))
    step = step or branches.arch_specific_end(whole)
    if not step or step not in whole.variants:
        raise ValueError(f"--step {step!r}: not a step this run timed")
    reps = sorted(int(r) for r in whole.raw_samples["replicate"].unique())
    lines = [f"run {run_id}, GPU {whole.env.get('gpu')}, step {step}, replicates {', '.join(map(str, reps))}", ""]
    lines += reference.targets(whole, step)
    with tempfile.TemporaryDirectory() as tmp:
        alone = [replicate_alone(whole.rec.dir, r, Path(tmp)) for r in reps]
        lines += ["", "| shape | mode | against | " + " | ".join(f"r{r}" for r in reps) + " | all |",
                  "|---|---|---|" + "---:|" * len(reps) + "---|"]
        for shape in reference.judged_shapes(whole):
            for mode in reference.TARGET_MODES:
                peer = reference.row_peer(whole, shape, mode)
                if peer is None:
                    continue
                per = [d.speedup(step, peer, shape, mode) for d in alone]
                c = whole.speedup(step, peer, shape, mode)
                cells = [f"{p.ratio:.3f}" if p else "-" for p in per]
                lines.append(f"| {shape.tuple_label} | {mode} | {peer} | {' | '.join(cells)} | "
                             + (f"{c.ratio:.3f} [{c.lo:.3f}, {c.hi:.3f}]" if c else "-") + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m lab.report.targets", description=__doc__.splitlines()[0])
    ap.add_argument("run", help="a run id under data/runs")
    ap.add_argument("--step", help="the step judged (default: the run's sm_90a end)")
    args = ap.parse_args(argv)
    try:
        print("\n".join(report(args.run, args.step)))
    except ValueError as exc:
        ap.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
