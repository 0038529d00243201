"""Where a replicate's job time goes beyond the GPU's sampling: one job of the committed run
5cfdce3's timing plan (its first, B1-H8-S512-D64 full: 12.8 s of job time in replicate 1 for
about 3.7 s of GPU work by the samples' own latencies), measured three ways on a GPU:
plain, under cProfile, and with NVML off; plus the per-call cost of the pieces a block of
samples runs (NVML read, the stopping rule's test, a cold and a hot block of 9 samples).

Usage: python profile_job.py OUT_DIR [job index ...]
"""
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path

import torch

from lab.__main__ import _load_built
from lab.measure import peers as P
from lab.measure import timing
from lab.measure.clocks import Clocks
from lab.studies.measure_shape import measure_shape
from lab.studies.replicates import Job

RUN = Path("data/explorations/2026-11-25-timing-overhead/plan_5cfdce3.json")
out = Path(sys.argv[1])
which = [int(a) for a in sys.argv[2:]] or [0]
plan = json.loads(RUN.read_text())
rule = timing.StopRule(**plan["rule"])
jobs = [Job.from_json(plan["jobs"][i]) for i in which]
names = sorted({n for j in jobs for n in j.impls})
kernels, failures = _load_built(names)
peers, _ = P.resolve(plan["peers"])
report = {"failures": sorted(failures)}


def per_call(fn, n):
    fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e3


clocks = Clocks()
report["nvml_read_ms"] = per_call(clocks.read, 200)
import numpy as np

x = list(np.random.default_rng(0).lognormal(0, 0.02, 300) + 10)
report["met_by_300_ms"] = per_call(lambda: rule.met_by(x), 200)
shape = jobs[0].shape
ins = shape.random_inputs(outputs=True)
k = kernels["warp_release_d64"]
launch = lambda: k.launch(ins[0], ins[1], ins[2], ins[3], shape.causal)  # noqa: E731
report["launch_ms"] = per_call(launch, 200)
cold = timing.ColdTimer([launch])
hot = timing.HotTimer([launch])
report["hot_reps"] = hot.reps
report["cold_block9_ms"] = per_call(lambda: cold.samples(9), 50)
report["hot_block9_ms"] = per_call(lambda: hot.samples(9), 20)
report["sleep_ms"] = per_call(lambda: (timing._gpu_sleep()(), torch.cuda.synchronize()), 50)
peer = [p for p in peers if p.name == "sdpa_cudnn"][0]
pl = peer.bind(ins[0], ins[1], ins[2], shape.causal, None)
with peer.context():
    report["cudnn_call_ms"] = per_call(pl, 200)
    pcold = timing.ColdTimer([pl])
    report["cudnn_cold_block9_ms"] = per_call(lambda: pcold.samples(9), 50)
print(json.dumps(report, indent=1), flush=True)

for idx, job in zip(which, jobs):
    here = {n: kernels[n] for n in job.impls if n in kernels}
    for label, clk, prof in (("plain", clocks, False), ("no_nvml", None, False), ("cprofile", clocks, True)):
        blocks = {"n": 0}
        t0 = time.perf_counter()
        pr = cProfile.Profile() if prof else None
        if pr:
            pr.enable()
        srows, mrows, notes = measure_shape(job.shape, here, peers, job.modes, job.rule(rule), clk, "prof", job.aa,
                                            job.seed, progress=lambda s: print(s, flush=True))
        if pr:
            pr.disable()
            pr.dump_stats(out / f"job{idx}.pstats")
            s = io.StringIO()
            pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(35)
            pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(45)
            (out / f"job{idx}_profile.txt").write_text(s.getvalue())
        wall = time.perf_counter() - t0
        import collections
        n_samples = collections.Counter(r["mode"] for r in srows)
        gpu_ms = sum(r["latency_us"] for r in srows) / 1e3
        res = {"job": idx, "shape": job.shape.id, "how": label, "wall_s": round(wall, 2), "samples": dict(n_samples),
               "rows": len(mrows), "sum_latency_s": round(gpu_ms / 1e3, 3)}
        print(json.dumps(res), flush=True)
        report.setdefault("jobs", []).append(res)
(out / "profile_job.json").write_text(json.dumps(report, indent=1))
