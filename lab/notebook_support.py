"""What the notebooks call: open a run, run one stage, show its tables. Display only; the logic
is in lab.studies.stages, lab.measure.stats and lab.report."""

from __future__ import annotations

import json
from pathlib import Path

from lab.measure import records
from lab.studies import stages
from lab.studies.params import RunParams


def start_or_open(run_id: str = "", **params):
    """The run `run_id`, or a new one started with `params` (lab.studies.params.RUN_OPTIONS' names,
    as typed; one that is missing or None takes RunParams' default)."""
    if run_id:
        return records.RunRecord.open(run_id)
    return stages.start(RunParams.from_text(**params))


def open_run(run_id: str = ""):
    """The given run, or the latest one still open (00_environment starts it)."""
    if run_id:
        return records.RunRecord.open(run_id)
    for rid in reversed(records.list_runs()):
        rec = records.RunRecord.open(rid)
        if rec.status.get("state") == "running":
            return rec
    raise RuntimeError("no open run: execute 00_environment first (or pass run_id)")


def open_for_report(run_id: str = ""):
    """The given run, or the committed report's (lab.report.committed.default_run); an open run given
    by id is closed first."""
    from lab.report import committed

    rid = run_id or committed.default_run()
    if rid is None:
        raise RuntimeError("no run under data/runs to report on")
    rec = records.RunRecord.open(rid)
    if rec.status.get("state") == "running" and rec.has("stages.json"):
        stages.finish(rec)
    return rec


def stage(rec, name: str) -> None:
    """Run one stage unless this run already has it: a run's measurements are never overwritten."""
    done = rec.read_json("stages.json") if rec.has("stages.json") else {}
    if stages.stage_done(name, done, RunParams.read(rec).knockouts, bool(RunParams.read(rec).decode_shapes)):
        print(f"stage {name} already ran for {rec.run_id} ({done[name + '_s']} s); start a new run to redo it")
        return
    {"build": stages.stage_build, "correctness": stages.stage_correctness, "timing": stages.stage_timing,
     "profile": stages.stage_profile}[name](rec)


def show_json(rec, name: str):
    import pandas as pd

    if not rec.has(name):
        print(f"{name}: not recorded")
        return None
    data = rec.read_json(name)
    if isinstance(data, dict):
        return pd.Series({k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in data.items()},
                         name=name).to_frame()
    return pd.DataFrame(data)


def build_table(rec):
    import pandas as pd

    rows = []
    for name, b in rec.read_json("build.json").items():
        for k in b.get("ptxas", []):
            launch = b.get("launch", {}).get(str(k["head_dim"]), {})
            rows.append(dict(variant=name, D=k["head_dim"], registers=k["registers"], spill_stores=k["spill_stores"],
                             spill_loads=k["spill_loads"], stack=k["stack_frame"], dynamic_smem=launch.get("dynamic_smem"),
                             threads=launch.get("threads"), build_s=b.get("seconds"), cached=b.get("cached"),
                             # the inputs it takes (builds recorded before issue 22: fp16, H_kv = H)
                             dtypes=",".join(b.get("dtypes") or ["fp16"]), kv_heads=b.get("kv_heads") or "same"))
        if not b.get("ok"):
            rows.append(dict(variant=name, error=b.get("error", "")[:500]))
    return pd.DataFrame(rows)


def correctness_table(rec):
    import pandas as pd

    if not rec.has("correctness.json"):
        print("correctness not recorded for this run")
        return None
    df = pd.DataFrame(rec.read_json("correctness.json"))
    df["err_over_tol"] = df["max_abs_err"] / df["tolerance"]
    # a case a variant does not take (bf16, grouped K/V heads: lab.measure.check) is counted apart
    df["not_taken"] = df["unsupported"].fillna("").astype(bool) if "unsupported" in df else False
    ran = df[~df["not_taken"]]
    out = ran.groupby("variant", sort=False).agg(cases=("passed", "size"), passed=("passed", "sum"),
                                                 worst_err_over_tol=("err_over_tol", "max"))
    return out.join(df.groupby("variant", sort=False)["not_taken"].sum())


def summary_table(rec):
    from lab.report.console import summary_table as text

    from lab.studies import derived

    print(text(rec, mode="hot"))
    return derived.summary(rec)


def profile_table(rec):
    if rec.has("profile_status.json"):
        print(rec.read_json("profile_status.json"))
    return rec.read_table("profile.csv") if rec.has("profile.csv") else None


def write_report(rec, reports_dir):
    """The report under reports_dir; where that is the repository's reports/, README.md's and docs/'s
    generated parts too (lab.report.docs), so that they quote the run the report comes from."""
    from lab import report
    from lab.report import committed, docs

    path = report.write(rec, reports_dir)
    if committed.is_committed_reports_dir(reports_dir):
        docs.write(rec)
    return path


def ablation_table(rec):
    from lab import report

    return report.ablation_table(rec)


def first_screen(rec, reports_dir) -> dict:
    """The report's first screen for inline display: the finding sentence, the hero figure's path
    (written by write_report under reports_dir/figures) and the compact ladder table as a DataFrame."""
    import pandas as pd

    from lab.report import ladder
    from lab.report.formats import FIGURES
    from lab.report.load import run_data
    from lab.report.tables import ablation_frame

    data = run_data(rec)
    head = data.headline()
    abl = ablation_frame(data, head, "hot")
    headers, rows = ladder.ladder_rows(data, abl, head)
    return {"sentence": ladder.finding(data, head) or "", "figure": Path(reports_dir) / "figures" / FIGURES["hero"],
            "table": pd.DataFrame(rows, columns=headers)}
