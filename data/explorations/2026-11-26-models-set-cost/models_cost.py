"""What the models set costs a run's timing: per shape and replicate, the seconds each models job took
(the replicates' notes), in the report's H100 run, in the two models-only A/B runs of this folder and
(job seconds only) in the two other H100 runs of 2026-11-26, all read from git history; and the GPU time
of the samples themselves (a hot sample at least 1 ms: a graph replay of about 1 ms).

    python data/explorations/2026-11-26-models-set-cost/models_cost.py
"""

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def from_history(run_id: str, commit: str) -> Path:
    """A run that left data/runs, unpacked from git history into build/ (once)."""
    dest = ROOT / "build/history" / commit
    if not (dest / "data/runs" / run_id).is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", commit, f"data/runs/{run_id}"], check=True,
                             capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest / "data/runs" / run_id


RUNS = {"full run 083634Z-517446e (H100, every shape)": from_history("20261126T083634Z-517446e", "1a31dde"),
        "models only, HEAD ea158bb (no sdpa_default)": HERE / "20261126T085515Z-ea158bb",
        "models only, base 517446e (sdpa_default timed)": HERE / "20261126T085816Z-517446e"}


def job_seconds(run: Path) -> pd.DataFrame:
    rows = []
    folder = run / "replicates/timing" if (run / "replicates/timing").is_dir() else run
    for f in sorted(folder.glob("r[0-9].json")):
        d = json.loads(f.read_text())
        rows += [{"replicate": d["replicate"], "shape": n["shape"], "seconds": n["seconds"]}
                 for n in d["notes"] if n.get("scope") == "models"]
    return pd.DataFrame(rows)


def sample_seconds(run: Path) -> tuple[int, float]:
    s = pd.read_parquet(run / "samples.parquet")
    s = s[s.dtype == "bfloat16"]
    cost = np.where(s["mode"] == "hot", np.maximum(s.latency_us, 1000.0), s.latency_us) / 1e6
    return len(s), float(cost.sum())

HISTORY = ("20261126T052611Z-5620c21", "20261126T064322Z-59ee83f")  # H100 runs now only in git history


def history_job_seconds(run_id: str) -> float:
    """The models jobs' seconds of a run in git history, from the commit that added its records."""
    def git(*args):
        return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout

    path = f"data/runs/{run_id}/replicates/timing"
    commit = git("log", "--diff-filter=A", "--format=%H", "--", f"{path}/r0.json").split()[-1]
    total = 0.0
    for i in range(3):
        notes = json.loads(git("show", f"{commit}:{path}/r{i}.json"))["notes"]
        total += sum(n["seconds"] for n in notes if n.get("scope") == "models")
    return total


for run_id in HISTORY:
    print(f"{run_id} (git history, H100): models jobs {history_job_seconds(run_id):.1f} s over 3 replicates\n")

for name, run in RUNS.items():
    j = job_seconds(run)
    first = j[j["shape"] == j["shape"].iloc[0]].seconds.sum()
    n, cost = sample_seconds(run)
    print(f"{name}: models jobs {j.seconds.sum():.1f} s over {j.replicate.nunique()} replicates "
          f"({j.seconds.sum() - first:.1f} s without the first models shape, {first:.1f} s at it); "
          f"{n} samples, {cost:.1f} s of them on the GPU")
    print(j.pivot(index="shape", columns="replicate", values="seconds").to_string(), "\n")
