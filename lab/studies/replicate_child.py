"""The child of lab.studies.replicates: one replicate of a run's timing plan, measured in this fresh process
(the parent runs R of them in turn and merges what they write):

    python -m lab.studies.replicate_child RUN_DIR PLAN --replicate I [--fake]

It loads the cached builds the plan names (a child never builds), seeds torch with the replicate's own
seed, and measures every job of the plan through lab.studies.measure_shape, writing its samples and stop
records after each job. `--fake` measures nothing: synthetic latencies (fake_measure), no torch, no GPU,
for the CPU tests and a dry run; `in_process` runs replicates in the caller's process for the tests.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from lab.cli import OneLineParser
from lab.measure.timing import StopRule
from lab.progress import report as report_position
from lab.studies.replicates import ROW_KEYS, Job, plan_dir, read_plan, replicate_seeds


def _load_builds(builds: dict) -> dict:
    """The plan's cached builds, ctypes-loaded (BuildResult.load checks each library's build key)."""
    from lab.kernels.build import BuildResult

    return {name: BuildResult(**summary).load() for name, summary in builds.items()}


def _seed_torch(seed: int) -> None:
    import torch

    torch.manual_seed(seed)  # every device's generator too: the inputs measure_shape draws


def measure_replicate(run_dir: Path, plan: str, i: int, measure=None, load=None, seed_inputs=None, clocks=None,
                      resolve_peers=None, progress=print) -> dict:
    """Replicate i of a plan, in this process: every job in order, its samples written after each.
    The defaults measure on the GPU; the tests inject a fake `measure` (fake_measure's signature,
    that of lab.studies.measure_shape.measure_shape) and a `load` of the builds."""
    import pandas as pd

    from lab.measure.records import SAMPLE_COLUMNS

    t_start = time.perf_counter()
    p = read_plan(run_dir, plan)
    out = plan_dir(run_dir, plan)
    if measure is None:
        from lab.studies.measure_shape import measure_shape as measure
    if clocks is None:
        from lab.measure.clocks import Clocks

        clocks = Clocks()
    if resolve_peers is None:
        from lab.measure.peers import resolve

        resolve_peers = lambda names: resolve(names)[0] if names else []  # noqa: E731
    input_seed, job_seeds = replicate_seeds(p, i)
    (seed_inputs or _seed_torch)(input_seed)
    kernels = (load or _load_builds)(p["builds"])
    peers = resolve_peers(p["peers"])
    rule = StopRule(**p["rule"])
    t_ready = time.perf_counter()
    frames, rows, notes = [], [], []  # frames: each job's samples (rebuilding one frame from every row
    # after each job cost a replicate seconds: the rows grow to about 90 000)
    from lab.measure.clocks import gpu_identity

    gpu = gpu_identity()  # which of the host's GPUs measured it (index, name, UUID): issue 49's records
    record = {"replicate": i, "input_seed": input_seed, "jobs_done": 0, "startup_s": round(t_ready - t_start, 2),
              "seconds": round(t_ready - t_start, 2), "gpu": gpu}
    for j, (job, seed) in enumerate(zip((Job.from_json(d) for d in p["jobs"]), job_seeds), 1):
        where = f"replicate {i + 1} of {p['replicates']}, shape {j} of {len(job_seeds)}"
        progress(f"  [{plan}] {where}: {job.shape} ({job.scope or plan})")
        report_position(p["run_id"], plan, i * len(job_seeds) + j - 1, p["replicates"] * len(job_seeds),
                        f"{where}: {job.shape}")
        here = {n: kernels[n] for n in job.impls if n in kernels}
        t_job = time.perf_counter()
        s_rows, m_rows, note = measure(job.shape, here, job.peers_here(peers), job.modes, job.rule(rule), clocks,
                                       p["run_id"], job.aa, seed, progress)
        if s_rows:
            frames.append(pd.DataFrame([{**r, "replicate": i} for r in s_rows], columns=SAMPLE_COLUMNS))
        rows += [{k: r[k] for k in (*ROW_KEYS, "stopped_by", "dropped_throttled", "input_sets")} for r in m_rows]
        notes.append({**note, "scope": job.scope, "not_taken": {**job.not_taken, **note.get("not_taken", {})},
                      "seconds": round(time.perf_counter() - t_job, 2)})  # what each scope costs a run
        samples = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=SAMPLE_COLUMNS)
        samples.to_parquet(out / f"r{i}.parquet.tmp", index=False)
        (out / f"r{i}.parquet.tmp").replace(out / f"r{i}.parquet")
        record = {"replicate": i, "input_seed": input_seed, "job_seeds": job_seeds, "jobs_done": j,
                  "startup_s": round(t_ready - t_start, 2), "seconds": round(time.perf_counter() - t_start, 2),
                  "rows": rows, "notes": notes, "gpu": gpu}
        (out / f"r{i}.json").write_text(json.dumps(record, indent=1, default=str))
    report_position(p["run_id"], plan, (i + 1) * len(job_seeds), p["replicates"] * len(job_seeds),
                    f"replicate {i + 1} of {p['replicates']} done")
    return record


def fake_measure(shape, kernels, peers, modes, rule, clocks, run_id, aa, seed, progress=print):
    """A stand-in for measure_shape without a GPU: per implementation a latency set by its name and
    the shape, shifted by a replicate effect drawn from `seed` (so replicates differ), ceil(min /
    block) blocks of samples. The same rows and notes measure_shape returns."""
    import zlib

    import numpy as np

    from lab.studies.measure_shape import AA_SUFFIX, shape_columns, summary_row

    rng = np.random.default_rng(seed)
    names = list(kernels) + [p.name for p in peers] + ([aa + AA_SUFFIX] if aa in kernels else [])
    n = -(-rule.min_samples // rule.block) * rule.block
    work = shape.B * shape.H * shape.S * shape.S * shape.D / (2 if shape.causal else 1) / 1e6
    sample_rows, summary_rows = [], []
    for mode in modes:
        for name in names:
            base = 1 + zlib.crc32(name.removesuffix(AA_SUFFIX).encode()) % 100 / 100.0
            lat = work * base * (1.1 if mode == "cold" else 1.0) * np.exp(rng.normal(0, 0.01) + rng.normal(0, 0.005, n))
            for k, x in enumerate(lat):
                sample_rows.append(dict(run_id=run_id, impl=name, **shape_columns(shape), mode=mode, sample=k,
                                        latency_us=float(x), sm_clock_mhz=None, throttled=False))
            summary_rows.append(summary_row(shape, name, mode, {0: lat}, "ci", 0, 1))
    return sample_rows, summary_rows, {"shape": shape.id, "unsupported": {}, "errors": {}, "not_taken": {}}


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m lab.studies.replicate_child",
                       description="one replicate of a run's timing plan (the timing stage runs these)")
    ap.add_argument("run_dir")
    ap.add_argument("plan")
    ap.add_argument("--replicate", type=int, required=True)
    ap.add_argument("--fake", action="store_true", help="synthetic latencies: no torch, no GPU (tests, dry runs)")
    args = ap.parse_args(argv)
    progress = lambda s: print(s, flush=True)  # noqa: E731
    if args.fake:
        record = measure_replicate(Path(args.run_dir), args.plan, args.replicate, progress=progress,
                                   **_without_gpu(fake_measure))
    else:
        record = measure_replicate(Path(args.run_dir), args.plan, args.replicate, progress=progress)
    replicates = read_plan(Path(args.run_dir), args.plan)["replicates"]
    progress(f"  [{args.plan}] replicate {args.replicate + 1} of {replicates}: {record['jobs_done']} shapes in "
             f"{record['seconds']:.0f} s (start-up {record['startup_s']:.1f} s)")
    return 0


def _fake_peers(names):
    return [type("FakePeer", (), {"name": n})() for n in names]


def _without_gpu(measure, load=None, resolve_peers=_fake_peers) -> dict:
    """measure_replicate's arguments for a replicate that touches no GPU: `measure` times, the builds are
    their names (or `load`'s), no torch seeding, no clock readings, peers stand-ins by name."""
    return dict(measure=measure, load=load or (lambda builds: {n: n for n in builds}), seed_inputs=lambda seed: None,
                clocks=False, resolve_peers=resolve_peers)


def in_process(measure, load=None, resolve_peers=_fake_peers):
    """A `spawn` for run() that measures each replicate in this process with `measure` (no GPU:
    the tests' fake timers). `load` turns the plan's builds into kernels (default: their names)."""
    def spawn_here(run_dir, plan, i, fake=False, progress=print) -> int:
        measure_replicate(Path(run_dir), plan, i, progress=progress, **_without_gpu(measure, load, resolve_peers))
        return 0
    return spawn_here


if __name__ == "__main__":
    sys.exit(main())
