"""The report's two runs as committed before issue 44 (ab5620e, from git history) against the same runs
in the tree now: every sample of both old copies (samples.parquet and replicates/<plan>/r<i>.parquet) is in
the new folder value for value, every stop record of the replicates' r<i>.json is in stops.parquet, every
replicate's notes are in replicates.json, and the summary computed from the new records equals the old
summary.csv. A check of the migration itself, so it reads the old folders out of git history.

    PYTHONPATH=. python data/checks/2026-11-27-records-layout/migrate_check.py
"""
import io
import json
import subprocess
import tarfile
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from lab.measure import records
from lab.studies import derived, replicates

ROOT = Path(__file__).resolve().parents[3]
OLD = "ab5620e"
RUNS = ("20261126T123735Z-1a31dde", "20261126T125209Z-1a31dde")


def rows(df):
    return [tuple(r) for r in df.reindex(columns=records.SAMPLE_COLUMNS).astype(object).itertuples(index=False)]


with tempfile.TemporaryDirectory() as tmp:
    for run in RUNS:
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", OLD, f"data/runs/{run}"], check=True,
                             capture_output=True).stdout
        tarfile.open(fileobj=io.BytesIO(tar)).extractall(tmp)
        old = Path(tmp) / "data/runs" / run
        new = records.RunRecord.open(run)
        tree = subprocess.run(["git", "-C", str(ROOT), "rev-parse", f"{OLD}:data/runs/{run}"], check=True,
                              capture_output=True, text=True).stdout.strip()
        print(f"{run}: old folder {OLD}:data/runs/{run} (tree {tree})")
        for plan, table in (("timing", "samples.parquet"), ("factorial", "factorial.parquet")):
            parts = sorted((old / "replicates" / plan).glob("r*.parquet"), key=lambda f: int(f.stem[1:]))
            copy = pd.concat([pd.read_parquet(f) for f in parts], ignore_index=True)
            now = new.read_table(table)
            same = rows(copy) == rows(now)
            extra = ""
            if plan == "timing":
                extra = f"; = old samples.parquet: {rows(pd.read_parquet(old / 'samples.parquet')) == rows(now)}"
            else:
                oldf = pd.read_parquet(old / "factorial.parquet")
                extra = (f"; old factorial.parquet held {len(oldf)} (the unthrottled ones), "
                         f"{int(now['throttled'].sum())} throttled now kept")
            print(f"  {plan}: {len(now)} samples in {table}, = the replicates' {len(copy)}: {same}{extra}")
            children = {int(f.stem[1:]): json.loads(f.read_text()) for f in (old / "replicates" / plan).glob("r*.json")}
            stops = new.read_stops()
            stops = stops[stops["plan"] == plan]
            n_old = sum(len(c["rows"]) for c in children.values())
            reasons = all(sorted(stops[stops.replicate == i]["stopped_by"]) == sorted(r["stopped_by"] for r in c["rows"])
                          for i, c in children.items())
            log = new.read_json("replicates.json")[plan]["runs"]
            notes = [r["notes"] for r in log] == [children[i]["notes"] for i in sorted(children)]
            print(f"  {plan}: {len(stops)} stop records, the replicates' {n_old}, reasons per replicate equal: {reasons}; "
                  f"notes equal: {notes}")
        keys = ["impl", *records.SHAPE_COLUMNS, "mode"]
        a = records.with_shape_columns(pd.read_csv(old / "summary.csv")).set_index(keys).sort_index()
        b = derived.summary(new).set_index(keys).sort_index()
        num = ["median_us", "ci_lo_us", "ci_hi_us", "p10_us", "p90_us", "mean_us", "min_us", "tflops"]
        diff = float(np.max(np.abs(b[num].to_numpy(float) / a[num].to_numpy(float) - 1)))
        stop = all((a[c].astype(str) == b[c].astype(str)).all() for c in ("n", "stopped_by", "dropped_throttled", "input_sets"))
        print(f"  summary: {len(b)} rows computed, summary.csv {len(a)}; stop fields and n equal: {stop}; "
              f"largest relative difference of a statistic: {diff:.1e}")
        print(f"  folder: {sum(f.stat().st_size for f in old.rglob('*') if f.is_file())} bytes then, "
              f"{sum(f.stat().st_size for f in new.dir.rglob('*') if f.is_file())} now")
