"""A replicate's jobs replayed in a fresh process, as a replicate child runs them: the committed run
5cfdce3's timing plan, a chosen subset of its jobs, with per-job wall times. Used to weigh the
per-process first-job cost and the per-block host work between blocks (GPU idle).

Usage: python replay_jobs.py OUT_DIR LABEL RULE(old|new) PROFILE(0|1) JOB [JOB ...]
RULE old: median_ci's rank recomputed by scipy at every call (the code of 5cfdce3); new: cached.
REPLAY_HOLD=sleep in the environment: blocks wait behind the fixed sleep, not the hold.
REPLAY_MIN_BLOCKS=k: the stopping rule of a run with MIN_BLOCKS k (default: the plan's, MIN_BLOCKS 2).
"""
import cProfile
import io
import os
import json
import pstats
import sys
import time

t_start = time.perf_counter()
from pathlib import Path  # noqa: E402

out, label, rule_kind, prof = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1"
which = [int(a) for a in sys.argv[5:]]
pr = cProfile.Profile() if prof else None
if pr:
    pr.enable()
import torch  # noqa: E402

from lab.kernels import attention  # noqa: E402,F401
from lab.measure import peers as P  # noqa: E402
from lab.measure import stats, timing  # noqa: E402
from lab.measure.clocks import Clocks  # noqa: E402
from lab.studies.measure_shape import measure_shape  # noqa: E402
from lab.studies.replicates import Job  # noqa: E402

if rule_kind == "old":
    stats._cached_median_ci_rank = stats._median_ci_rank  # uncached, as at 5cfdce3

if os.environ.get("REPLAY_HOLD") == "sleep":  # the fixed GPU sleep of 5cfdce3 instead of the hold
    from lab.measure import hold as holds

    holds.default = lambda: None
plan = json.loads(Path("data/explorations/2026-11-25-timing-overhead/plan_5cfdce3.json").read_text())
rule = timing.StopRule(**plan["rule"])
if os.environ.get("REPLAY_MIN_BLOCKS"):  # the run's rule with another MIN_BLOCKS (lab.studies.params)
    from lab.studies.params import RunParams

    rule = RunParams(min_blocks=int(os.environ["REPLAY_MIN_BLOCKS"])).replicate_rule()
jobs = [Job.from_json(plan["jobs"][i]) for i in which]
names = sorted({n for j in jobs for n in j.impls})
from lab.__main__ import _load_built  # noqa: E402

kernels, _ = _load_built(names)
peers, _ = P.resolve(plan["peers"])
clocks = Clocks()
torch.manual_seed(100000)
t_ready = time.perf_counter()
rec = {"label": label, "rule": rule_kind, "hold": os.environ.get("REPLAY_HOLD", "hold"), "medians": [],
       "stop_rule": {k: getattr(rule, k) for k in ("block", "block_after_minimum", "min_samples")}, "profiled": prof, "startup_s": round(t_ready - t_start, 2), "jobs": []}
for idx, job in zip(which, jobs):
    here = {n: kernels[n] for n in job.impls if n in kernels}
    t0 = time.perf_counter()
    srows, mrows, notes = measure_shape(job.shape, here, peers if job.peers else [], job.modes, job.rule(rule), clocks,
                                        "replay", job.aa, job.seed, progress=lambda s: None)
    wall = time.perf_counter() - t0
    blocks = sum(-(-n // rule.block) for n in __import__("collections").Counter(
        (r["impl"], r["mode"]) for r in srows).values())
    rec["jobs"].append({"job": idx, "shape": job.shape.id, "scope": job.scope, "wall_s": round(wall, 2),
                        "samples": len(srows), "blocks": blocks, "rows": len(mrows)})
    print(json.dumps(rec["jobs"][-1]), flush=True)
    for r in mrows:
        rec["medians"].append({"job": idx, "impl": r["impl"], "mode": r["mode"], "median_us": r["median_us"], "n": r["n"]})
    median_of = {(m["impl"], m["mode"]): m["median_us"] for m in mrows}
    pos = {}  # a cold sample over its row's median, by its place in the block
    for r in srows:
        if r["mode"] == "cold" and (r["impl"], "cold") in median_of:
            pos.setdefault(r["sample"] % rule.block, []).append(r["latency_us"] / median_of[(r["impl"], "cold")])
    rec["jobs"][-1]["cold_position_ratio"] = {k: round(sorted(v)[len(v) // 2], 4) for k, v in sorted(pos.items())}
rec["total_s"] = round(time.perf_counter() - t_start, 2)
if pr:
    pr.disable()
    pr.dump_stats(out / f"{label}.pstats")
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(60)
    (out / f"{label}_profile.txt").write_text(s.getvalue())
(out / f"{label}.json").write_text(json.dumps(rec, indent=1))
print(json.dumps({k: v for k, v in rec.items() if k not in ("jobs", "medians")}), flush=True)
