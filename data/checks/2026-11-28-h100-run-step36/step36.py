"""Step 36 (uniform_descriptors) against step 35 (longest_first_queue), FA3 and cuDNN at every shape and mode
of a run: speedups round by round with 95 % intervals over the replicates (the report's rule,
lab.report.load.RunData.speedup), > 1: step 36 faster.

    python data/checks/2026-11-28-h100-run-step36/step36.py [RUN] > data/checks/2026-11-28-h100-run-step36/step36.txt
"""
import sys

from lab.measure.records import RunRecord
from lab.report.load import run_data

RUN = sys.argv[1] if len(sys.argv) > 1 else "20261128T051218Z-9ccfab9"
STEP, OTHERS = "uniform_descriptors", ("longest_first_queue", "flash_attn3", "sdpa_cudnn")


def main() -> None:
    data = run_data(RunRecord.open(RUN))
    print(f"# {RUN}, {STEP} against each; shape, mode, then speedup [95 % CI] per implementation")
    print("| shape | mode | " + " | ".join(f"vs {o}" for o in OTHERS) + " |")
    print("|---|---|" + "---|" * len(OTHERS))
    for mode in data.modes:
        for shape in data.measured_shapes:
            cells = []
            for other in OTHERS:
                ci = data.speedup(STEP, other, shape, mode)
                cells.append("-" if ci is None else f"{ci.ratio:.3f} [{ci.lo:.3f}, {ci.hi:.3f}]")
            if any(c != "-" for c in cells):
                print(f"| {shape} | {mode} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
