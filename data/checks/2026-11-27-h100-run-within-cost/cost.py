"""Stage seconds of the H100 runs before and with FlashAttention-3 and the sustained mode (issue 45's
target: `make ablation` grows by at most 120 s for them), from each run's stages.json: in data/runs/ for
the report's run, in inputs/ for the superseded ones (copied from git history: inputs/history.json).

    python data/checks/2026-11-27-h100-run-within-cost/cost.py > data/checks/2026-11-27-h100-run-within-cost/cost.txt
"""
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
RUNS = {  # run: what it is
    "20261126T123735Z-1a31dde": "before FA3 and the sustained mode",
    "20261127T200255Z-9d5873b": "with them, stop 53",
    "20261127T232414Z-97d9b4e": "with them, peers profiled in one process a shape, triton's 20 ms",
}
STAGES = ("build_s", "correctness_s", "timing_s", "factorial_s", "profile_s")


def stages(run: str) -> dict:
    path = REPO / "data" / "runs" / run / "stages.json"
    return json.loads((path if path.is_file() else HERE / "inputs" / run / "stages.json").read_text())


def main() -> None:
    rows = {run: stages(run) for run in RUNS}
    base = next(iter(rows.values()))
    print("# run: " + ", ".join(f"{s[:-2]}" for s in STAGES) + ", crossval (in timing), total; then against the first")
    for run, st in rows.items():
        total = sum(st[s] for s in STAGES)
        crossval = st.get("parts", {}).get("timing", {}).get("crossval_s")
        print(f"{run} ({RUNS[run]}): " + ", ".join(f"{st[s]:.1f}" for s in STAGES)
              + f", crossval {crossval}, total {total:.1f} s")
        if st is not base:
            print("    against " + next(iter(rows)) + ": " + ", ".join(f"{st[s] - base[s]:+.1f}" for s in STAGES)
                  + f", total {total - sum(base[s] for s in STAGES):+.1f} s")


if __name__ == "__main__":
    main()
