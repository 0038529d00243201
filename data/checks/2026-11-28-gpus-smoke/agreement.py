"""The two small runs of gpus_smoke.sh on one host of two H200s, the same parameters (3 steps, the 7
canonical shapes, hot, 4 replicates): with GPUS=2 (replicates side by side, two a GPU) and GPUS=1 (one
after another on GPU 0). Where each replicate ran, what the timing stage took, and whether the two runs
agree: every speedup between two implementations measured in both (each step against each other and
against every peer, round by round with 95 % intervals over the replicates: lab.report.load.RunData.speedup)
with |log r2 - log r1| / sqrt(se1^2 + se2^2) < 1.96, issue 49's agreement rule.

    python data/checks/2026-11-28-gpus-smoke/agreement.py > data/checks/2026-11-28-gpus-smoke/agreement.txt
"""
import itertools
import json
import math
from pathlib import Path

from lab.measure.records import RunRecord
from lab.report.load import RunData

HERE = Path(__file__).resolve().parent
RUNS = {"GPUS=2": "20261128T055335Z-4a20781", "GPUS=1": "20261128T055526Z-4a20781"}
STEPS = ("tma", "longest_first_queue", "uniform_descriptors")


def main() -> None:
    data = {k: RunData(RunRecord.open(run, root=HERE / "runs")) for k, run in RUNS.items()}
    for k, run in RUNS.items():
        stages = json.loads((HERE / "runs" / run / "stages.json").read_text())
        reps = json.loads((HERE / "runs" / run / "replicates.json").read_text())["timing"]["runs"]
        where = ", ".join(f"r{r['replicate'] + 1}: GPU {r['gpu']['gpu_index']} ({r['seconds']} s)" for r in reps)
        print(f"{k} {run}: timing stage {stages['timing_s']} s; {where}")
    two, one = data["GPUS=2"], data["GPUS=1"]
    impls = [i for i in two.impls() if i in one.impls() and "~" not in i and not i.endswith("_aa")]
    pairs = [(a, b) for a, b in itertools.permutations(impls, 2) if a in STEPS and (b not in STEPS or STEPS.index(a) > STEPS.index(b))]
    n = within = 0
    worst = (0.0, None)
    parent = []  # the one step-vs-parent pair among the three steps
    for shape in two.measured_shapes:
        for a, b in pairs:
            r2, r1 = two.speedup(a, b, shape, "hot"), one.speedup(a, b, shape, "hot")
            if r2 is None or r1 is None or not r2.se_log or not r1.se_log:
                continue
            z = abs(math.log(r2.ratio) - math.log(r1.ratio)) / math.hypot(r2.se_log, r1.se_log)
            n += 1
            within += z < 1.96
            if (a, b) == ("uniform_descriptors", "longest_first_queue"):
                parent.append(f"{shape}: {r2.ratio:.4f} / {r1.ratio:.4f}, |z| {z:.2f}")
            if z > worst[0]:
                worst = (z, f"{a} vs {b} at {shape}: {r2.ratio:.3f} [{r2.lo:.3f}, {r2.hi:.3f}] (GPUS=2) against "
                            f"{r1.ratio:.3f} [{r1.lo:.3f}, {r1.hi:.3f}] (GPUS=1)")
    print(f"speedups in both runs: {n} ({len(pairs)} pairs x {len(two.measured_shapes)} shapes); |z| < 1.96 at {within} "
          f"({100 * within / n:.1f} %); the largest |z| {worst[0]:.2f}: {worst[1]}")
    print("step 36 against its parent, step 35 (GPUS=2 / GPUS=1):")
    for line in parent:
        print("  " + line)


if __name__ == "__main__":
    main()
