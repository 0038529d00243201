"""What the models set costs a run's timing: per shape and replicate, the seconds each models job took
(the replicates' notes), in the report's H100 run, in the two models-only A/B runs of this folder and
(job seconds only) in the two other H100 runs of 2026-11-26; and the GPU time of the samples themselves
(a hot sample at least 1 ms: a graph replay of about 1 ms). The three runs no longer in the tree are
read from what history.json and history-083634Z-bf16-samples.parquet keep of them (copied from git
history, each with its commit and tree id).

    python data/explorations/2026-11-26-models-set-cost/models_cost.py
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
HISTORY = json.loads((HERE / "history.json").read_text())["runs"]
FULL = "20261126T083634Z-517446e"  # the report's H100 run then (every shape)
RUNS = {"full run 083634Z-517446e (H100, every shape)": FULL,
        "models only, HEAD ea158bb (no sdpa_default)": HERE / "20261126T085515Z-ea158bb",
        "models only, base 517446e (sdpa_default timed)": HERE / "20261126T085816Z-517446e"}


def job_seconds(run) -> pd.DataFrame:
    if run == FULL:
        return pd.DataFrame(HISTORY[FULL]["models_notes"])
    rows = []
    for f in sorted(run.glob("r[0-9].json")):
        d = json.loads(f.read_text())
        rows += [{"replicate": d["replicate"], "shape": n["shape"], "seconds": n["seconds"]}
                 for n in d["notes"] if n.get("scope") == "models"]
    return pd.DataFrame(rows)


def sample_seconds(run) -> tuple[int, float]:
    if run == FULL:
        s = pd.read_parquet(HERE / "history-083634Z-bf16-samples.parquet")
    else:
        s = pd.read_parquet(run / "samples.parquet")
        s = s[s.dtype == "bfloat16"]
    cost = np.where(s["mode"] == "hot", np.maximum(s.latency_us, 1000.0), s.latency_us) / 1e6
    return len(s), float(cost.sum())


HISTORY_ONLY = ("20261126T052611Z-5620c21", "20261126T064322Z-59ee83f")  # H100 runs, their job seconds kept


def history_job_seconds(run_id: str) -> float:
    """The models jobs' seconds of a run no longer in the tree, over its replicates."""
    return float(sum(HISTORY[run_id]["models_job_seconds"]))


for run_id in HISTORY_ONLY:
    print(f"{run_id} (git history, H100): models jobs {history_job_seconds(run_id):.1f} s over 3 replicates\n")

for name, run in RUNS.items():
    j = job_seconds(run)
    first = j[j["shape"] == j["shape"].iloc[0]].seconds.sum()
    n, cost = sample_seconds(run)
    print(f"{name}: models jobs {j.seconds.sum():.1f} s over {j.replicate.nunique()} replicates "
          f"({j.seconds.sum() - first:.1f} s without the first models shape, {first:.1f} s at it); "
          f"{n} samples, {cost:.1f} s of them on the GPU")
    print(j.pivot(index="shape", columns="replicate", values="seconds").to_string(), "\n")
