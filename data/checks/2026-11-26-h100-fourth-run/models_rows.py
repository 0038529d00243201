"""The models set's rows in two H100 runs: each implementation's median in run A over its median in
run B, per shape and mode (> 1: slower in A), and the two runs' models job seconds. Run B may be in
git history only (pass the commit that has it as the third argument).

    python data/checks/2026-11-26-h100-fourth-run/models_rows.py 20261126T123735Z-1a31dde \
        20261126T083634Z-517446e 1a31dde
"""

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[3]


def read(run: str, name: str, commit: str | None) -> str:
    here = ROOT / "data/runs" / run / name
    if here.exists():
        return here.read_text()
    return subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:data/runs/{run}/{name}"], check=True,
                          capture_output=True, text=True).stdout


def models(run: str, commit: str | None) -> pd.DataFrame:
    s = pd.read_csv(io.StringIO(read(run, "summary.csv", commit)))
    return s[s.dtype == "bfloat16"].set_index(["impl", "B", "H", "S", "D", "H_kv", "mode"]).median_us


def job_seconds(run: str, commit: str | None) -> float:
    return sum(n["seconds"] for i in range(3) for n in json.loads(read(run, f"replicates/timing/r{i}.json", commit))["notes"]
               if n.get("scope") == "models")


a, b = sys.argv[1], sys.argv[2]
commit = sys.argv[3] if len(sys.argv) > 3 else None
ratio = (models(a, None) / models(b, commit)).dropna().rename("A / B").reset_index()
print(f"A: {a}, B: {b}; models jobs {job_seconds(a, None):.1f} s against {job_seconds(b, commit):.1f} s")
print("median latency, A / B, per implementation and mode over the models rows (min, median, max):")
print(ratio.groupby(["impl", "mode"])["A / B"].agg(["count", "min", "median", "max"]).round(4).to_string())
