"""Replicates: a run's timing measured R times, each time by a fresh process.

Performance varies between processes (inputs, memory placement, clock state, interleaving order)
as well as within one, and an interval taken within one process alone is too narrow (Kalibera and
Jones, "Rigorous Benchmarking in Reasonable Time", ISMM 2013). So a stage that times (the run's
timing, the factorial) writes a plan and runs R child processes one after another on the same GPU:

    python -m lab.studies.replicate_child RUN_DIR PLAN --replicate I [--fake]

Replicate i loads the cached builds the plan names (a child never builds), seeds torch with its
own seed for fresh inputs, and measures every job of the plan (a shape, its implementations and
modes, the A/A twin) through lab.studies.measure_shape with its own interleaving seed and its
share of the run's sample budget (lab.studies.params.RunParams.replicate_rule). It writes
`replicates/<plan>/r<i>.parquet` (its samples, with a `replicate` column) after every job and
`r<i>.json` (per (impl, shape, mode) its stop reason and dropped samples, per job its notes, its
timings): the plan's working files, which a resumed run reads. The stage merges them after every
replicate into the plan's samples table (samples.parquet, factorial.parquet) and records each
replicate's exit code and seconds in replicates.json; once every replicate has run, the working
files are folded into the run's records (consolidate: the samples checked value for value, the stop
records to stops.parquet, the plan and the notes to replicates.json) and removed, so that the run
folder holds each sample once. The child is lab.studies.replicate_child; its `--fake` measures nothing:
synthetic latencies (fake_measure), no torch, no GPU, for the CPU tests and a dry run.

    plan = write_plan(rec, "timing", jobs, builds, peers, rule, replicates=3, seed=0)
    samples, stops, notes = run(rec, "timing", progress=print)
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from lab.kernels.manifest import REPO
from lab.studies.replicate_plan import (ROOT, Job, child_command, plan_dir, plan_identity, read_log,  # noqa: F401
                                        read_plan, replicate_seeds, write_plan)  # the plan's side, also replicates.<name>

# What identifies a summary row: the implementation, the shape (lab.measure.records.SHAPE_COLUMNS) and the mode
ROW_KEYS = ("impl", "B", "H", "S", "D", "causal", "H_kv", "dtype", "mode")


# --- the parent: R replicates in turn, merged, then folded into the run's records -----------------

# Where a plan's samples go in the run folder (every sample, throttled ones flagged): the stage's table.
SAMPLES_FILE = {"timing": "samples.parquet", "factorial": "factorial.parquet"}


def spawn(run_dir: Path, plan: str, i: int, fake: bool = False, progress=print) -> int:
    """Replicate i as a child process (`python -m lab.studies.replicate_child`), its output passed on line
    by line; returns its exit code."""
    proc = subprocess.Popen(child_command(run_dir, plan, i, fake), cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)
    for line in proc.stdout:
        progress(line.rstrip("\n"))
    return proc.wait()


def run(rec, plan: str, progress=print, spawn=spawn, fake: bool = False, after_each=None, executor=None):
    """The plan's R replicates in turn, merged after each into the plan's samples table
    (SAMPLES_FILE), then folded into the run's records (consolidate): (samples, stops, notes).
    `after_each(samples, stops, notes)` gets the merge after every replicate. A replicate that fails
    stops the rest: its exit code goes to replicates.json, a RuntimeError names it, and the plan's
    working files stay for a resumed run.

    Resuming (the plan was started before, and the process measuring it was stopped): a replicate
    whose child measured every job is kept, not measured again; one stopped midway has its files
    moved to `interrupted/` (kept, not merged) and is measured again from its first job, with the
    same seeds. A plan already folded into the records is returned as recorded.

    `executor` (a concurrent.futures.Executor whose every worker owns one GPU: lab.studies.gpu_pool) runs
    the replicates side by side, one a worker at a time (gpu_pool.spawn_captured's children); they are
    merged as they end (those that end together, once); a failed one is run once more on another GPU, and
    raises if it fails again, once the others have ended (what they measured is kept).
    Without it, `spawn` runs them one after another in this GPU's process, as before."""
    log = rec.read_json("replicates.json") if rec.has("replicates.json") else {}
    if log.get(plan, {}).get("consolidated"):
        progress(f"  [{plan}] every replicate was measured and recorded before the run was resumed: kept")
        return recorded(rec, plan)
    p = read_plan(rec.dir, plan)
    _release_gpu_cache()
    earlier = {r["replicate"]: r for r in log.get(plan, {}).get("runs", [])}
    done = [i for i in range(p["replicates"]) if _measured_in_full(rec.dir, plan, p, i)]
    log[plan] = {"replicates": p["replicates"], "rule": p["rule"], "seed": p["seed"], "runs": []}
    if done:
        log[plan]["resumed"] = True
    for i in done:
        child = read_child(rec.dir, plan, i)
        log[plan]["runs"].append(earlier.get(i) or log_entry(i, None, child.get("seconds"), child))
        progress(f"  [{plan}] replicate {i + 1} of {p['replicates']}: measured before the run was resumed, kept")
    pending = [i for i in range(p["replicates"]) if i not in done]
    if executor is not None:
        merged = _run_side_by_side(rec, plan, p, pending, log, executor, progress, fake, after_each)
    else:
        merged = _run_one_after_another(rec, plan, p, pending, log, spawn, progress, fake, after_each)
    rec.write_json("replicates.json", log)
    if merged is None:  # every replicate was measured before: merge them for the stage
        merged = merge_into(rec, plan, after_each)
    consolidate(rec, plan)
    return merged


def _run_one_after_another(rec, plan: str, p: dict, pending: list[int], log: dict, spawn, progress, fake: bool,
                           after_each):
    """The pending replicates one after another through `spawn` (run's), merged after each; a failed
    one stops the rest. Returns the last merge (None where none was pending)."""
    merged = None
    for i in pending:
        set_aside(rec.dir, plan, i)
        progress(f"  [{plan}] replicate {i + 1} of {p['replicates']} (a fresh process)")
        t0 = time.perf_counter()
        code = spawn(rec.dir, plan, i, fake=fake, progress=progress)
        merged = _record(rec, plan, log, i, code, round(time.perf_counter() - t0, 1), after_each)
        if code != 0:
            raise RuntimeError(f"replicate {i} of plan {plan} exited with code {code} (its output is above; "
                               f"what it measured is in {plan_dir(rec.dir, plan)})")
    return merged


MOVES_AFTER_OTHERS = 20  # a moved replicate's hand-backs once no other replicate runs (a pool of one GPU)


def _run_side_by_side(rec, plan: str, p: dict, pending: list[int], log: dict, executor, progress, fake: bool,
                      after_each):
    """The pending replicates through `executor` (run's: one a GPU, lab.studies.gpu_pool), merged as they
    end (one merge for those that end together: four at once on four GPUs took 4 x 1.1-1.3 s one after
    another in data/checks/2026-11-28-h200x4-gpus-ablation-2). A replicate that fails, or whose worker is
    lost, is handed to the pool once more, to another GPU than the one it failed on (a GPU lost mid-run
    leaves its replicate to the others: _hand_on); its first attempt is kept in replicates.json (the plan's
    `moved`) and the report says so. One that fails again raises once the others have ended. Returns the
    last merge."""
    from concurrent.futures import FIRST_COMPLETED, wait

    from lab.studies import gpu_pool

    for i in pending:
        set_aside(rec.dir, plan, i)
    attempts = {i: 0 for i in pending}  # how many times each replicate was run to its end (or its loss)
    futures = {executor.submit(gpu_pool.spawn_captured, rec.dir, plan, i, fake): (i, ()) for i in pending}
    progress(f"  [{plan}] replicates {', '.join(str(i + 1) for i in pending)} of {p['replicates']} side by side")
    merged, failed, bounced = None, [], 0
    while futures:
        done, _ = wait(futures, return_when=FIRST_COMPLETED)
        ended = []  # the replicates of this batch to record: one merge for all of them (each rewrites the table)
        for future in done:
            i, avoid = futures.pop(future)
            try:
                got = future.result()
            except Exception as exc:  # noqa: BLE001 - a worker lost: its replicate goes to the others
                got = {"code": None, "output": f"{type(exc).__name__}: {exc}", "seconds": None, "gpu": ""}
            if got.get("elsewhere"):  # landed on the GPU it failed on: back to the pool, to another worker
                bounced += not futures
                if bounced <= MOVES_AFTER_OTHERS:
                    time.sleep(0.5 if futures else 0.05)
                    _hand_on(executor, futures, rec, plan, i, fake, avoid)
                    continue
                got = {"code": None, "output": f"no other GPU took replicate {i + 1} after it failed on GPU "
                                                f"{', '.join(avoid)}", "seconds": None, "gpu": ""}
            attempts[i] += 1
            for line in got["output"].splitlines():
                progress(f"  [replicate {i + 1}] {line}")
            if got["code"] != 0 and attempts[i] == 1:
                gpu = got.get("gpu") or (read_child(rec.dir, plan, i).get("gpu") or {}).get("gpu_index")
                log[plan].setdefault("moved", []).append(
                    {"replicate": i, "gpu": "" if gpu is None else str(gpu), "exit_code": got["code"],
                     "output_tail": got["output"][-2000:]})
                progress(f"  [{plan}] replicate {i + 1} failed on GPU {gpu or '?'} (exit code {got['code']}): "
                         "handed to the pool again, for another GPU")
                set_aside(rec.dir, plan, i)
                avoid = (str(gpu),) if gpu not in (None, "") else ()
                _hand_on(executor, futures, rec, plan, i, fake, avoid)
                continue
            ended.append((i, got["code"], got["seconds"]))
            failed += [(i, got["code"])] if got["code"] != 0 else []
        for k, (i, code, seconds) in enumerate(ended):
            merged = _record(rec, plan, log, i, code, seconds, after_each, merge=k == len(ended) - 1) or merged
    if failed:
        raise RuntimeError(f"replicate(s) {', '.join(str(i) for i, _ in failed)} of plan {plan} exited with code(s) "
                           f"{', '.join(str(c) for _, c in failed)} (their output is above; what they measured is in "
                           f"{plan_dir(rec.dir, plan)})")
    return merged


def _hand_on(executor, futures: dict, rec, plan: str, i: int, fake: bool, avoid: tuple) -> None:
    """Replicate i back to the pool, for another GPU than `avoid`: a hold first (gpu_pool.hold), which goes
    to the worker the pool would pick first, often the one the replicate just failed on, then the replicate.
    Without it a thread pool handed the replicate straight back to the idle failing worker time after time
    (tests/test_gpu_pool.py's lost GPU, failing in most runs of that file alone)."""
    from lab.studies import gpu_pool

    executor.submit(gpu_pool.hold)
    futures[executor.submit(gpu_pool.spawn_captured, rec.dir, plan, i, fake, avoid)] = (i, avoid)


def _record(rec, plan: str, log: dict, i: int, code, seconds, after_each, merge: bool = True):
    """Replicate i's entry in replicates.json (its exit code, seconds and child's record), then, with `merge`,
    the plan's merge, whose seconds (the parent's own, after the replicate: stage time that no replicate's
    "seconds" holds) go to the entry too (0.0 without: replicates that end together are merged once, by the
    last recorded); returns the merge (None without)."""
    log[plan]["runs"].append(log_entry(i, code, seconds, read_child(rec.dir, plan, i)))
    log[plan]["runs"].sort(key=lambda r: r["replicate"])
    rec.write_json("replicates.json", log)
    t0 = time.perf_counter()
    merged = merge_into(rec, plan, after_each) if merge else None
    next(r for r in log[plan]["runs"] if r["replicate"] == i)["merge_s"] = round(time.perf_counter() - t0, 1)
    rec.write_json("replicates.json", log)
    return merged


def merge_into(rec, plan: str, after_each=None):
    """merge(), its samples written to the plan's table (a run stopped midway keeps them)."""
    merged = merge(rec.dir, plan)
    rec.write_table(SAMPLES_FILE.get(plan, f"{plan}.parquet"), merged[0])
    if after_each is not None:
        after_each(*merged)
    return merged


def log_entry(i: int, code, seconds, child: dict) -> dict:
    """replicates.json's record of replicate i: its exit code (None: measured before a resume, its
    exit not seen), its seconds, and its child's own record."""
    return {"replicate": i, "exit_code": code, "seconds": seconds, "startup_s": child.get("startup_s"),
            "measured_s": child.get("seconds"), "input_seed": child.get("input_seed"),
            "jobs_done": child.get("jobs_done", 0), **({"gpu": child["gpu"]} if child.get("gpu") else {})}


def _measured_in_full(run_dir: Path, plan: str, p: dict, i: int) -> bool:
    """Whether replicate i's child measured every job of the plan `p`."""
    return read_child(run_dir, plan, i).get("jobs_done") == len(p["jobs"])


def set_aside(run_dir: Path, plan: str, i: int) -> list[Path]:
    """Move what an earlier, stopped attempt at replicate i left (r<i>.parquet, r<i>.json) to
    interrupted/<attempt>-r<i>.*, where merge does not read it; returns the new paths."""
    out = plan_dir(run_dir, plan)
    left = [f for f in (out / f"r{i}.parquet", out / f"r{i}.json") if f.exists()]
    if not left:
        return []
    aside = out / "interrupted"
    aside.mkdir(exist_ok=True)
    attempt = 1 + len({f.name.split("-", 1)[0] for f in aside.glob(f"*-r{i}.*")})
    moved = []
    for f in left:
        moved.append(f.replace(aside / f"{attempt}-{f.name}"))
    return moved




def seconds_measured(rec, plan: str) -> float:
    """Seconds the replicates of a plan measured in full before this process started (a resumed
    run's earlier attempt); 0 for a plan not started."""
    entry = read_log(rec.dir).get(plan, {})
    if entry.get("consolidated"):
        return float(sum(r.get("seconds") or 0 for r in entry.get("runs", [])))
    if not entry or not plan_dir(rec.dir, plan).joinpath("plan.json").exists():
        return 0.0
    p = read_plan(rec.dir, plan)
    return float(sum(r.get("seconds") or 0 for r in entry.get("runs", [])
                     if _measured_in_full(rec.dir, plan, p, r["replicate"])))


def replicate_notes(run_dir: Path, plan: str = "timing") -> dict[int, list]:
    """{replicate: its per-job notes} of a plan: from replicates.json once the plan is folded in,
    else from its replicates' working records (r<i>.json; a stopped attempt's files, set aside under
    interrupted/, are not read); {} for a run without them."""
    entry = read_log(run_dir).get(plan, {})
    if entry.get("consolidated"):
        return {int(r["replicate"]): r.get("notes", []) for r in entry.get("runs", [])}
    out = {}
    for f in sorted(plan_dir(run_dir, plan).glob("r*.json")):
        if f.stem[1:].isdigit():
            out[int(f.stem[1:])] = json.loads(f.read_text()).get("notes", [])
    return out


def seconds_by_scope(run_dir: Path, plan: str = "timing") -> dict[str, float]:
    """{scope: seconds} its jobs took over the plan's replicates, by the replicates' own notes."""
    out: dict[str, float] = {}
    for notes in replicate_notes(run_dir, plan).values():
        for note in notes:
            scope = note.get("scope") or plan
            out[scope] = out.get(scope, 0.0) + float(note.get("seconds") or 0.0)
    return out


def merge_notes(by_replicate: dict[int, list]) -> list[dict]:
    """One note per job: the first replicate's, with later replicates' errors added."""
    notes: list[dict] = []
    for i, mine in sorted(by_replicate.items()):
        for j, note in enumerate(mine):
            if j == len(notes):
                notes.append({**note, "errors": dict(note.get("errors", {}))})
            else:
                for what, why in note.get("errors", {}).items():
                    notes[j]["errors"].setdefault(what, f"replicate {i}: {why}")
    return notes


def _release_gpu_cache() -> None:
    """Hand back the memory this process's caching allocator holds (the stage's ceilings, its
    correctness checks), so that the replicates' processes have the GPU's memory to themselves."""
    torch = sys.modules.get("torch")  # never imported here just for this
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def read_child(run_dir: Path, plan: str, i: int) -> dict:
    path = plan_dir(run_dir, plan) / f"r{i}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _child_records(run_dir: Path, plan: str) -> dict[int, dict]:
    """{replicate: its r<i>.json} of a plan's working files."""
    return {int(f.stem[1:]): json.loads(f.read_text())
            for f in sorted(plan_dir(run_dir, plan).glob("r*.json"), key=lambda f: f.stem.zfill(9)) if f.stem[1:].isdigit()}


def _children(run_dir: Path, plan: str) -> list[tuple[int, Path]]:
    return sorted((int(f.stem[1:]), f) for f in plan_dir(run_dir, plan).glob("r*.parquet") if f.stem[1:].isdigit())


def merge(run_dir: Path, plan: str):
    """A plan's replicates' working records as (samples, stops, notes): every replicate's samples in
    one table (SAMPLE_COLUMNS, with `replicate`), each replicate's stop record of every row
    (STOP_COLUMNS) and one note per job (merge_notes)."""
    import pandas as pd

    from lab.measure.records import SAMPLE_COLUMNS, STOP_COLUMNS, with_shape_columns

    children = _children(run_dir, plan)
    frames = [pd.read_parquet(f) for _, f in children]
    samples = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=SAMPLE_COLUMNS)
    # replicates written before issue 22 lack H_kv; before rounds were recorded, the round column
    samples = with_shape_columns(samples).reindex(columns=SAMPLE_COLUMNS)
    meta = _child_records(run_dir, plan)
    stops = pd.DataFrame([{**{k: r.get(k) for k in STOP_COLUMNS}, "plan": plan, "replicate": i}
                          for i, m in meta.items() for r in m.get("rows", [])], columns=STOP_COLUMNS)
    stops = with_shape_columns(stops)
    return samples, stops, merge_notes({i: m.get("notes", []) for i, m in meta.items()})


def same_samples(a, b) -> bool:
    """Whether two samples tables hold the same rows, value for value, in the same order."""
    from lab.measure.records import SAMPLE_COLUMNS

    a, b = a.reindex(columns=SAMPLE_COLUMNS).reset_index(drop=True), b.reindex(columns=SAMPLE_COLUMNS).reset_index(drop=True)
    if a.shape != b.shape:
        return False
    for col in SAMPLE_COLUMNS:
        x, y = a[col], b[col]
        if x.isna().tolist() != y.isna().tolist():
            return False
        keep = ~x.isna()
        if x[keep].astype(object).tolist() != y[keep].astype(object).tolist():
            return False
    return True


def consolidate(rec, plan: str) -> None:
    """Fold a measured plan's working files (replicates/<plan>/: plan.json, r<i>.parquet, r<i>.json)
    into the run's records: the samples, already in the plan's table, are checked there value for
    value; the stop records go to stops.parquet, the plan (its builds by key: build.json holds the
    rest) and each replicate's seeds and notes to replicates.json; then the working files are removed
    (a stopped attempt's, under interrupted/, stay). Refuses, removing nothing, where the table does
    not hold exactly the replicates' samples."""
    samples_file = SAMPLES_FILE.get(plan, f"{plan}.parquet")
    samples = merge(rec.dir, plan)[0]
    if not rec.has(samples_file) or not same_samples(rec.read_table(samples_file), samples):
        raise RuntimeError(f"{rec.path(samples_file)} does not hold exactly the samples of {plan_dir(rec.dir, plan)}: "
                           "nothing folded in, nothing removed")
    fold(rec, plan, plan_identity(read_plan(rec.dir, plan)))


def fold(rec, plan: str, identity: dict | None, **note) -> None:
    """The record-keeping half of consolidate, once the samples are known to be in the plan's table:
    stop records, plan identity (None: not kept) and each replicate's record, seeds and notes into
    the run's records (with `note`'s keys on the plan's entry), then the working files removed."""
    import pandas as pd

    from lab.measure.records import STOP_COLUMNS, STOPS

    stops = merge(rec.dir, plan)[1]
    log = rec.read_json("replicates.json") if rec.has("replicates.json") else {}
    entry = log.setdefault(plan, {"runs": []})
    if identity is not None:
        entry.update(replicates=identity["replicates"], rule=identity["rule"], seed=identity["seed"], plan=identity)
    entry["samples_file"] = SAMPLES_FILE.get(plan, f"{plan}.parquet")
    entry.update(note)
    children = _child_records(rec.dir, plan)
    logged = {r["replicate"] for r in entry.setdefault("runs", [])}
    for i, child in children.items():  # a replicate measured outside run() (an exploration's call): its own record
        if i not in logged:
            entry["runs"].append(log_entry(i, None, child.get("seconds"), child))
    entry["runs"].sort(key=lambda r: r["replicate"])
    for r in entry["runs"]:
        child = children.get(r["replicate"], {})
        r["job_seeds"], r["notes"] = child.get("job_seeds"), child.get("notes", [])
    entry["consolidated"] = True
    before = rec.read_stops() if rec.has(STOPS) else pd.DataFrame(columns=STOP_COLUMNS)
    kept = before[before["plan"] != plan]
    rec.write_table(STOPS, pd.concat([kept, stops], ignore_index=True) if len(kept) else stops)
    rec.write_json("replicates.json", log)
    out = plan_dir(rec.dir, plan)
    for i in children:
        (out / f"r{i}.json").unlink()
        (out / f"r{i}.parquet").unlink(missing_ok=True)
    (out / "plan.json").unlink(missing_ok=True)
    compact_interrupted(out / "interrupted")
    for folder in (out, out.parent):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def stops(rec):
    """Every plan's stop records (STOP_COLUMNS): stops.parquet, and those of a plan still measured
    (or stopped midway) from its working files."""
    import pandas as pd

    from lab.measure.records import STOP_COLUMNS, STOPS

    frames = [rec.read_stops()] if rec.has(STOPS) else []
    root = Path(rec.dir) / ROOT
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if folder.is_dir() and not read_log(rec.dir).get(folder.name, {}).get("consolidated"):
            frames.append(merge(rec.dir, folder.name)[1])
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=STOP_COLUMNS)


def has_stops(rec) -> bool:
    """Whether the run recorded any stop records (stops.parquet, or a plan's working files)."""
    from lab.measure.records import STOPS

    return rec.has(STOPS) or any(plan_dir(rec.dir, p.name).is_dir() for p in (Path(rec.dir) / ROOT).glob("*"))


def compact_interrupted(folder: Path) -> None:
    """A stopped attempt's files (set_aside), kept as measured but smaller: its samples written again with
    records.PARQUET_OPTIONS (read back equal, or left as they were), its record gzip-compressed
    (<attempt>-r<i>.json.gz, as correctness.json is)."""
    import gzip

    import pandas as pd

    from lab.measure.records import PARQUET_OPTIONS

    for f in sorted(folder.glob("*.parquet")) if folder.is_dir() else []:
        before = pd.read_parquet(f)
        tmp = f.with_name(f.name + ".tmp")
        before.to_parquet(tmp, index=False, **PARQUET_OPTIONS)
        if pd.read_parquet(tmp).equals(before):
            tmp.replace(f)
        else:
            tmp.unlink()
    for f in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        packed = f.with_name(f.name + ".gz")
        with open(packed, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
            gz.write(f.read_bytes())
        f.unlink()


def recorded(rec, plan: str):
    """A plan folded into the run's records, as run() returns it: (samples, stops, notes)."""
    entry = read_log(rec.dir)[plan]
    stops = rec.read_stops()
    return (rec.read_samples(entry.get("samples_file", SAMPLES_FILE.get(plan, f"{plan}.parquet"))),
            stops[stops["plan"] == plan].reset_index(drop=True),
            merge_notes(replicate_notes(rec.dir, plan)))

