"""A run's kept results (lab.studies.derived.kept: the summary's and the calibrations' bootstraps, the factorial's
effects) computed ahead of its report: their inputs are final once the timing stage is done, and the profile
stage, whose Nsight Compute processes hold the GPUs and leave most cores idle, starts this module in a
background process at a lower priority (`start`) and waits for it at its end, so that the report finds them
kept (12.9 s of the report's 35.5 s for run 20261128T201125Z-0131c0e on the 2-core machine:
data/checks/2026-11-28-h200x4-gpus-ablation-2/report_profile.txt).

    python -m lab.studies.ahead RUN_ID [--nice N]
"""

from __future__ import annotations

import os
import sys

NICE = 10  # below Nsight Compute's processes, beside which it runs


def warm(rec) -> list[str]:
    """Compute and keep every kept result of the run that its records allow; the names computed. Reads only
    what the timing stage wrote (samples, stops, the factorial), never what the profile writes."""
    from lab.studies import derived, factorial

    done = []
    if rec.has("samples.parquet"):
        derived.summary(rec)
        derived.calibration(rec)
        derived.sustained_calibration(rec)
        done += ["summary", "calibration", "sustained-calibration"]
    if factorial.run_effects(rec) is not None:
        done.append("factorial")
    return done


def start(rec, popen=None):
    """warm in a background process at a lower priority, on half the cores unless LAB_WORKERS says otherwise;
    None where nothing is kept (LAB_DERIVED_CACHE=0) or it could not start (the report then computes them)."""
    from lab.measure import parallel
    from lab.studies import background, derived

    if not derived.keeping():
        return None
    half = max(1, min(parallel.MAX_WORKERS, (os.cpu_count() or 2) // 2))
    workers = {} if "LAB_WORKERS" in os.environ else {"LAB_WORKERS": str(half)}
    return background.start("lab.studies.ahead", rec, NICE, workers, popen)


def main(argv: list[str] | None = None) -> int:
    from lab.studies import background

    return background.main("lab.studies.ahead", "compute a run's kept results ahead of its report (the profile "
                           "stage runs this)", lambda rec: "kept: " + (", ".join(warm(rec)) or "nothing to keep"), argv)


if __name__ == "__main__":
    sys.exit(main())
