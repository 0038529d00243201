"""Step 36 (uniform_descriptors) against step 35 (longest_first_queue), FA3 and cuDNN at every shape and mode
of a run, then step 35 against FA3 and cuDNN at the sustained shapes, hot and sustained: speedups round by
round with 95 % intervals over the replicates (the report's rule, lab.report.load.RunData.speedup), > 1: the
step faster.

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
    print(f"\n# {RUN}, longest_first_queue (step 35) against FA3 and cuDNN where the sustained mode ran")
    print("| shape | vs FA3 hot | vs FA3 sustained | vs cuDNN hot | vs cuDNN sustained |")
    print("|---|---|---|---|---|")
    for shape in data.sustained_shapes:
        cells = [data.speedup("longest_first_queue", other, shape, mode) for other in OTHERS[1:]
                 for mode in ("hot", "sustained")]
        print(f"| {shape} | " + " | ".join("-" if c is None else f"{c.ratio:.3f} [{c.lo:.3f}, {c.hi:.3f}]"
                                           for c in cells) + " |")


if __name__ == "__main__":
    main()
