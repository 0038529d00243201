"""Issue 46's targets on step 69's H100 landing run, per replicate and over all three. From the repository root,
no GPU:

    PYTHONPATH=. python data/checks/2026-12-05-h100-run-step69/judge.py > data/checks/2026-12-05-h100-run-step69/judge.txt

It copies the committed run folder (RUN) into a temporary folder and prints what the report's "Against FlashAttention-3" block would say
(lab.report.sections.reference.targets) on the run's samples, then each judged row's speedup per replicate (the
run's folder again with one replicate's samples) and over all of them. Adapted from
../2026-12-05-step68-69-draft/landing/judge.py (the first landing's, which read a runs.tgz)."""

import shutil
import tempfile
from pathlib import Path

import pandas as pd

from lab.kernels.shape import Shape
from lab.measure import records
from lab.report.load import RunData
from lab.report.sections import reference
from lab.studies.shapes import model_names

HERE = Path(__file__).resolve().parent
STEP = "counter_tile_from_2k_d64"
RUN = HERE.parents[1] / "runs" / "20261205T192124Z-f585548"


def load(folder: Path, reps: tuple[int, ...], every: tuple[int, ...]) -> RunData:
    """The run with only the replicates `reps` in its samples (a copy of the folder for a subset)."""
    if reps != every:
        sub = folder.parent / f"{folder.name}-r{''.join(map(str, reps))}" / folder.name
        shutil.copytree(folder, sub)
        samples = pd.read_parquet(sub / "samples.parquet")
        samples[samples["replicate"].isin(reps)].to_parquet(sub / "samples.parquet")
        folder = sub
    return RunData(records.RunRecord.open(folder.name, folder.parent))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "runs" / RUN.name
        shutil.copytree(RUN, folder)
        every = tuple(sorted(int(r) for r in pd.read_parquet(folder / "samples.parquet")["replicate"].unique()))
        both = load(folder, every, every)
        print(f"run {folder.name}, GPU {both.env.get('gpu')}, replicates {', '.join(map(str, every))}\n")
        for line in reference.targets(both, STEP):
            print(line)
        rows = [(Shape(*b.dims, c), "fa3") for b, _ in reference.FA3_BARS for c in (False, True)]
        rows += [(s, "peer") for s in both.measured_shapes if model_names(s)]
        singles = [load(folder, (i,), every) for i in every]
        print("\n| shape | mode | against | " + " | ".join(f"r{i}" for i in every) + " | all |\n|---|---|---|"
              + "---:|" * len(every) + "---|")
        for sh, kind in rows:
            for mode in reference.TARGET_MODES:
                peer = reference.REFERENCE if kind == "fa3" else both.fastest_peer(sh, mode)
                if peer is None:
                    continue
                per = [d.speedup(STEP, peer, sh, mode) for d in singles]
                c = both.speedup(STEP, peer, sh, mode)
                cells = [f"{p.ratio:.3f}" if p else "-" for p in per]
                print(f"| {sh.tuple_label} | {mode} | {peer} | {' | '.join(cells)} | "
                      + (f"{c.ratio:.3f} [{c.lo:.3f}, {c.hi:.3f}]" if c else "-") + " |")


if __name__ == "__main__":
    main()
