"""Step 62 (rescale_under_s) over its parent, step 61 (conditional_rescale), at every shape and mode the
recorded run timed both (paired speedups with 95 % intervals over its replicates, lab.report.load.RunData.speedup, as
the report computes them). > 1: step 62 faster.

    PYTHONPATH=. python data/checks/2026-12-04-h200-run-step62/step_table.py 20261204T054448Z-7192073
    PYTHONPATH=. python data/checks/2026-12-04-h200-run-step62/step_table.py <run> <step> <parent>   # another step
"""
import sys

from lab.measure import records
from lab.report.load import RunData

STEP, PARENT = "rescale_under_s", "conditional_rescale"


def main() -> None:
    """The table (a function, so that the worker processes lab.report's parallel map starts can import this file)."""
    step, parent = sys.argv[2:4] if len(sys.argv) > 3 else (STEP, PARENT)
    data = RunData(records.RunRecord.open(sys.argv[1]))
    print(f"{step} over {parent}, run {sys.argv[1]}")
    rows = []
    for shape in data.shapes:
        for mode in ("hot", "cold", "sustained"):
            ci = data.speedup(step, parent, shape, mode)
            if ci:
                rows.append((shape.D, str(shape), mode, ci))
    for _, spec, mode, ci in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
        print(f"{spec:44s} {mode:10s} {ci.ratio:.3f}x [{ci.lo:.3f}, {ci.hi:.3f}]")


if __name__ == "__main__":
    main()
