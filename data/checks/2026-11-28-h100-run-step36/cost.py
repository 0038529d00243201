"""Stage seconds of the H100 runs before and with FlashAttention-3 and the sustained mode (issue 45's
target: `make ablation` grows by at most 120 s for them), from each run's stages.json: data/runs/ for the
report's run, data/checks/2026-11-27-h100-run-within-cost/inputs/ for the superseded ones (copied from git
history: its history.json).

    python data/checks/2026-11-28-h100-run-step36/cost.py > data/checks/2026-11-28-h100-run-step36/cost.txt
"""
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
INPUTS = (REPO / "data" / "runs", REPO / "data" / "checks" / "2026-11-27-h100-run-within-cost" / "inputs")
RUNS = {  # run: what it is
    "20261126T123735Z-1a31dde": "before FA3 and the sustained mode",
    "20261127T232414Z-97d9b4e": "with them, stop 54",
    "20261128T051218Z-9ccfab9": "with them, hot turns of 4 ms, the ncu cross-check and SASS mix, step 36",
}
STAGES = ("build_s", "correctness_s", "timing_s", "factorial_s", "profile_s")


def stages(run: str, inputs=INPUTS) -> dict:
    path = next(root / run / "stages.json" for root in inputs if (root / run / "stages.json").is_file())
    return json.loads(path.read_text())


def main(runs: dict = RUNS, inputs=INPUTS, built_before: bool = True) -> None:
    """The stage seconds of `runs` (oldest first, each looked up under `inputs`), each against the first; with
    `built_before`, the last one also with the build and correctness stages of the run before it."""
    RUNS = runs
    rows = {run: stages(run, inputs) for run in RUNS}
    base = next(iter(rows.values()))
    print("# run: " + ", ".join(f"{s[:-2]}" for s in STAGES) + ", total; then against the first")
    for run, st in rows.items():
        total = sum(st[s] for s in STAGES)
        parts = st.get("parts", {})
        print(f"{run} ({RUNS[run]}): " + ", ".join(f"{st[s]:.1f}" for s in STAGES) + f", total {total:.1f} s"
              + (f"; parts {json.dumps(parts)}" if parts else ""))
        if st is not base:
            print("    against " + next(iter(rows)) + ": " + ", ".join(f"{st[s] - base[s]:+.1f}" for s in STAGES)
                  + f", total {total - sum(base[s] for s in STAGES):+.1f} s")
    if not built_before:
        return
    last, prior = rows[list(RUNS)[-1]], rows[list(RUNS)[-2]]
    fresh = prior["build_s"] + prior["correctness_s"] + sum(last[s] for s in STAGES[2:])
    print(f"# the last run's machine had built the variants in the GPU tests first; with the build and correctness "
          f"stages of the fresh machine before it: total {fresh:.1f} s, "
          f"{fresh - sum(base[s] for s in STAGES):+.1f} s against the first")


if __name__ == "__main__":
    main()
