"""Where two runs' step-vs-parent ratios disagree, by ladder shape and mode: the count of ratios whose difference lies
outside 1.96 combined standard errors (lab.report.replication.agreement's test), and the median ratio of the two runs'
standard errors. The older run comes back from git history (data/index.toml's [[superseded]] tree).

    git archive c8ab9304b482d38e8480190f6659e029a1909058 | tar -x -C /tmp/run_0cffc5d
    PYTHONPATH=. python data/checks/2026-12-02-h200-run-step59/replicate_by_shape.py 20261202T155630Z-7d83b72 /tmp/run_0cffc5d
"""
import collections
import math
import statistics
import sys
from pathlib import Path

from lab.measure import records
from lab.report import replication as R
from lab.report.load import RunData


def main() -> None:
    a = RunData(records.RunRecord.open(sys.argv[1]))
    b = RunData(records.RunRecord.open(Path(sys.argv[2])))
    shapes = [s for s, scope in a.run_params.scopes.items() if scope == "ladder" and s in set(b.measured_shapes)]
    pairs = [p for p in R.step_pairs(a.variants) if p in set(R.step_pairs(b.variants))]
    counts = collections.defaultdict(lambda: [0, 0])
    se_ratio = []
    for shape in shapes:
        for mode in [m for m in a.modes if m in b.modes]:
            for step, parent in pairs:
                ca, cb = a.speedup(step, parent, shape, mode), b.speedup(step, parent, shape, mode)
                if ca is None or cb is None:
                    continue
                z = (math.log(ca.ratio) - math.log(cb.ratio)) / math.hypot(R._se(ca), R._se(cb))
                counts[(str(shape), mode)][0] += 1
                counts[(str(shape), mode)][1] += abs(z) >= 1.959964
                se_ratio.append(R._se(ca) / R._se(cb))
    print(f"A {a.run_id}, B {b.run_id}: median SE ratio A / B {statistics.median(se_ratio):.3f} over {len(se_ratio)}")
    print(f"{'shape':32s} {'mode':5s} ratios outside share")
    for (shape, mode), (n, bad) in sorted(counts.items(), key=lambda kv: -kv[1][1] / kv[1][0]):
        print(f"{shape:32s} {mode:5s} {n:6d} {bad:7d} {bad / n:5.2f}")


if __name__ == "__main__":
    main()
