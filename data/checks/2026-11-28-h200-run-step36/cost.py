"""Stage seconds of the H200 runs before and with FlashAttention-3 and the sustained mode, from each run's
stages.json (data/runs/ for the report's run; inputs/ for the superseded ones, copied from git history: 125209Z
from 4017373, 162546Z from c30e58e), by the H100 check's cost.py.

    python data/checks/2026-11-28-h200-run-step36/cost.py > data/checks/2026-11-28-h200-run-step36/cost.txt
"""
import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("h100_cost", HERE.parent / "2026-11-28-h100-run-step36" / "cost.py")
h100_cost = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h100_cost)

RUNS = {
    "20261126T125209Z-1a31dde": "before FA3 and the sustained mode",
    "20261127T162546Z-8e4712d": "with them, stop 54",
    "20261128T075958Z-c30e58e": "with them, hot turns of 4 ms, the ncu cross-check and SASS mix, step 36",
}

if __name__ == "__main__":
    h100_cost.main(RUNS, (h100_cost.REPO / "data" / "runs", HERE / "inputs"), built_before=False)
