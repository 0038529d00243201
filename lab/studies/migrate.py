"""Bring a run folder written before issue 44 to the current layout (lab.measure.records), every
sample checked.

    python -m lab.studies.migrate RUN_DIR [RUN_DIR ...]    # prints what it checked, per folder

The layout before held the samples twice (samples.parquet and replicates/<plan>/r<i>.parquet) and
tables computed from them (summary.csv, calibration.json, factorial.csv, shapes.json). A folder is
migrated in a copy beside it, which replaces it only once every check has passed:

- replicates/<plan>/: folded into the records as a run folds them (lab.studies.replicates
  .consolidate): the timing's replicates must hold exactly the samples of samples.parquet; the old
  factorial.parquet (the unthrottled samples joined with their factor levels) must hold exactly the
  unthrottled samples of the factorial's replicates, and is replaced by every one of them.
- No replicates/ (runs recorded before replicates): the stop records come from summary.csv (one
  replicate, 0) and the notes from shapes.json, into replicates.json's timing entry, marked migrated.
- The summary computed from the new records (lab.studies.derived.summarize) must give summary.csv's
  stop fields and sample counts row for row; its statistics may differ where the estimator changed
  since the run (the largest relative difference is printed).
- Then the derived files go, and the parquet tables are written again with records.PARQUET_OPTIONS
  (read back and compared value for value).

A folder already in the current layout is left as it is. Exits 1, the folder unchanged, where a
check fails.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from lab.cli import OneLineParser
from lab.measure import records
from lab.studies import replicates

STOP_FIELDS = ("stopped_by", "dropped_throttled", "input_sets", "n")


class MigrationError(RuntimeError):
    pass


def migrate(run_dir: Path, progress=print) -> dict:
    """Migrate one run folder in place (through a checked copy); returns what was checked."""
    run_dir = Path(run_dir).resolve()
    rec = records.RunRecord(run_dir.name, run_dir.parent, create=False)
    if not rec.legacy:
        progress(f"{run_dir.name}: already in the current layout")
        return {"run": run_dir.name, "migrated": False}
    work = run_dir.with_name(run_dir.name + ".migrating")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(run_dir, work)
    try:
        report = _migrate_copy(records.RunRecord(work.name, work.parent, create=False), run_dir.name, progress)
    except Exception:
        shutil.rmtree(work, ignore_errors=True)
        raise
    old = run_dir.with_name(run_dir.name + ".before-migration")
    run_dir.rename(old)
    work.rename(run_dir)
    shutil.rmtree(old)
    return report


def _migrate_copy(rec, run_id: str, progress) -> dict:
    old_summary = records.with_shape_columns(rec.read_table("summary.csv"))
    old_samples = rec.read_table("samples.parquet")
    report = {"run": run_id, "migrated": True, "samples": len(old_samples)}
    plans = sorted(p.name for p in (rec.dir / replicates.ROOT).iterdir() if p.is_dir()) \
        if (rec.dir / replicates.ROOT).is_dir() else []
    if "factorial" in plans:
        report["factorial_samples"] = _factorial_samples(rec)
    for plan in plans:
        folder = replicates.plan_dir(rec.dir, plan)
        if any(folder.glob("r*.parquet")):
            if not folder.joinpath("plan.json").exists():
                raise MigrationError(f"{run_id}: replicates/{plan} has its replicates' samples but no plan.json")
            replicates.consolidate(rec, plan)  # refuses unless the plan's table holds exactly its replicates' samples
            report[f"{plan}_replicates_checked"] = True
        else:  # trimmed before (an exploration's runs): the samples only in the plan's table, the records beside
            _fold_records_only(rec, plan)
            report[f"{plan}_records_only"] = True
    if "timing" not in plans:
        _from_summary(rec, old_summary)
    report.update(_check_summary(rec, old_summary, run_id))
    for name in records.LEGACY_FILES:
        rec.path(name).unlink(missing_ok=True)
    for name in ("samples.parquet", "factorial.parquet", records.STOPS):
        if rec.has(name):
            before = rec.read_table(name)
            rec.write_table(name, before)
            after = rec.read_table(name)
            same = after.equals(before) if name == records.STOPS else replicates.same_samples(after, before)
            if not same:
                raise MigrationError(f"{run_id}: {name} changed when written again")
    if not replicates.same_samples(rec.read_samples(), records.with_replicate(old_samples)):
        raise MigrationError(f"{run_id}: samples.parquet lost or changed a sample")
    progress(f"{run_id}: {report}")
    return report


def _factorial_samples(rec) -> int:
    """Replace the old factorial.parquet (unthrottled samples joined with their factor levels) by every
    sample of the factorial's replicates, after checking it held exactly their unthrottled samples."""
    samples, _, _ = replicates.merge(rec.dir, "factorial")
    if rec.has("factorial.parquet"):
        old = rec.read_table("factorial.parquet")
        kept = samples[~samples["throttled"].astype(bool)]
        key = [c for c in records.SAMPLE_COLUMNS if c in old.columns]
        a = records.with_replicate(old)[key].sort_values(key).reset_index(drop=True)
        b = kept[key].sort_values(key).reset_index(drop=True)
        if not replicates.same_samples(a.reindex(columns=records.SAMPLE_COLUMNS),
                                       b.reindex(columns=records.SAMPLE_COLUMNS)):
            raise MigrationError(f"{rec.dir.name}: factorial.parquet does not hold exactly the unthrottled samples "
                                 "of replicates/factorial")
    rec.write_table("factorial.parquet", samples)
    return len(samples)


def _fold_records_only(rec, plan: str) -> None:
    """A plan folder whose replicates' samples were already removed (only r<i>.json, maybe no plan.json):
    its records folded in once the plan's table holds samples of exactly those replicates."""
    table = replicates.SAMPLES_FILE.get(plan, f"{plan}.parquet")
    children = sorted(int(f.stem[1:]) for f in replicates.plan_dir(rec.dir, plan).glob("r*.json") if f.stem[1:].isdigit())
    have = sorted(int(r) for r in rec.read_samples(table)["replicate"].unique()) if rec.has(table) else []
    if not children or have != children:
        raise MigrationError(f"{rec.dir.name}: replicates/{plan} records replicates {children}, {table} holds {have}")
    plan_json = replicates.plan_dir(rec.dir, plan) / "plan.json"
    identity = replicates.plan_identity(json.loads(plan_json.read_text())) if plan_json.exists() else None
    replicates.fold(rec, plan, identity, migrated="the replicates' samples were kept only in " + table
                    + ("" if identity else "; the plan was not kept") + " (issue 44)")


def _from_summary(rec, old_summary: pd.DataFrame) -> None:
    """The stop records and notes of a run recorded before replicates: summary.csv's stop fields as
    replicate 0's, shapes.json's notes as its notes."""
    stops = old_summary.assign(plan="timing", replicate=0).reindex(columns=records.STOP_COLUMNS)
    rec.write_table(records.STOPS, stops)
    notes = rec.read_json("shapes.json") if rec.has("shapes.json") else []
    log = rec.read_json("replicates.json") if rec.has("replicates.json") else {}
    log["timing"] = {**log.get("timing", {"replicates": 1}), "consolidated": True, "samples_file": "samples.parquet",
                     "migrated": "recorded before replicates: the stop records come from summary.csv, the notes "
                                 "from shapes.json (issue 44)",
                     "runs": [{"replicate": 0, "notes": notes}]}
    rec.write_json("replicates.json", log)


def _check_summary(rec, old: pd.DataFrame, run_id: str) -> dict:
    from lab.studies import derived

    stops = rec.read_stops()
    new = derived.summarize(rec.read_samples(), stops[stops["plan"] == "timing"])
    keys = ["impl", *records.SHAPE_COLUMNS, "mode"]
    a = old.assign(causal=old["causal"].astype(bool)).set_index(keys).sort_index()
    b = new.assign(causal=new["causal"].astype(bool)).set_index(keys).sort_index()
    if list(a.index) != list(b.index):
        raise MigrationError(f"{run_id}: the summary from the new records has other rows than summary.csv "
                             f"({len(b)} against {len(a)})")
    for col in STOP_FIELDS:
        if col in a.columns and not (a[col].astype(str) == b[col].astype(str)).all():
            raise MigrationError(f"{run_id}: {col} differs between summary.csv and the new records")
    drift = 0.0
    for col in ("median_us", "ci_lo_us", "ci_hi_us", "p10_us", "p90_us", "mean_us", "min_us"):
        if col in a.columns:
            x, y = a[col].to_numpy(float), b[col].to_numpy(float)
            ok = np.isfinite(x) & (x != 0)
            if ok.any():
                drift = max(drift, float(np.max(np.abs(y[ok] - x[ok]) / np.abs(x[ok]))))
    return {"summary_rows": len(a), "summary_max_rel_diff": drift}


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m lab.studies.migrate", description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dirs", nargs="+", type=Path)
    args = ap.parse_args(argv)
    code = 0
    for d in args.run_dirs:
        try:
            migrate(d)
        except (MigrationError, RuntimeError, FileNotFoundError) as exc:
            print(f"{d}: not migrated: {exc}", file=sys.stderr)
            code = 1
    return code


if __name__ == "__main__":
    raise SystemExit(main())
