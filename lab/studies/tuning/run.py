"""`python -m lab tune` / `make tune`: search a kernel's tile constants on every GPU of the host.

    python -m lab tune --shapes tune --trials 16 --sampler tpe --gpus all   # the tuned kernel: the sm_90a branch's end
    python -m lab tune --gpus 1 ...          # the same search with one worker (for the speedup)
    python -m lab tune --fake --gpus 2       # a dry run on a CPU: dask LocalCluster, synthetic latencies

Phases, all through one dask cluster (dask_cuda.LocalCUDACluster: one worker per GPU, each with its
own CUDA_VISIBLE_DEVICES):
  0. prebuild: every legal configuration compiled in parallel on the host's cores (cached), so
     the search times GPU work and a one-GPU and a several-GPU search compare like with like;
  1. A/A: the default configuration against itself on every GPU (one task pinned to each worker
     per head dim), giving the within-GPU noise floor and the GPU-to-GPU spread;
  2. the search (lab.studies.tuning.search);
  3. the dispatch table chosen from the trials (lab.studies.tuning.dispatch), written to the run folder;
  4. held-out validation: the tuned dispatch on the full correctness grid, then timed against the
     default, interleaved, hot, on shapes the search never saw; a class faster on none of its
     held-out shapes keeps the default in the table written to kernels/variants/dispatch_<variant>.json
     (and dispatch_committed.json).

The run folder `data/tuning/<run_id>/` (never overwritten) holds params.json, env.json (per
worker), status.json, wall.json, tuning.parquet, samples.parquet, aa.parquet, dispatch.json,
dispatch_committed.json, heldout_check.json, heldout.parquet, prebuild.json and study.journal (Optuna's journal of the studies).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict

from lab.kernels.shape import Shape
from lab.kernels.variants import REPO
from lab.measure import records
from lab.studies.params import TuneParams
from lab.studies.shapes import shape_set

FAKE_DIR = REPO / "build" / "tuning-fake"  # --fake runs: synthetic numbers never go under data/
PREBUILD_MAX = 256  # legal configurations prebuilt whole; a larger space: a seeded sample (starting_configs)

# Tuning shapes: one per shape class covered (see lab.studies.tuning.dispatch for the class rule).
TUNING_SETS = {
    "tune": [(8, 16, 512, 64, False), (4, 16, 4096, 64, True), (8, 16, 512, 128, True), (4, 16, 4096, 128, False)],
    "tune-wide": [(8, 16, 512, 64, False), (8, 16, 512, 64, True), (4, 16, 4096, 64, False), (4, 16, 4096, 64, True),
                  (8, 16, 512, 128, False), (8, 16, 512, 128, True), (4, 16, 4096, 128, False),
                  (4, 16, 4096, 128, True)],
}
# Held-out shapes: other B, H and S than any tuning set, both head dims, causal and not.
HELDOUT_SETS = {
    "heldout": [(16, 8, 256, 64, False), (2, 32, 1024, 64, False), (2, 8, 8192, 64, True), (4, 16, 2048, 64, False),
                (4, 8, 768, 128, True), (16, 16, 1024, 128, True), (2, 16, 2048, 128, False),
                (1, 32, 8192, 128, False)],
}


def taken_shapes(variant: str, shapes: list[tuple]) -> tuple[list[tuple], dict]:
    """(the shapes `variant` takes, {spec: why} for those whose dtype or K/V heads it does not take,
    by its manifest): a tuning run measures the first and records the second, as not taken."""
    from lab.kernels.manifest import get

    v, kept, refused = get(variant), [], {}
    for s in shapes:
        shape = Shape.of(s)
        if why := v.not_taken(shape):
            refused[shape.spec] = why
        else:
            kept.append(s)
    return kept, refused


def shapes_named(name: str, sets: dict) -> list[tuple]:
    """A named set, or 'B,H,S,D[,causal];...' (as `python -m lab run --shapes`)."""
    if name in sets:
        return list(sets[name])
    try:
        return [s.astuple() for s in shape_set(name)]
    except ValueError as exc:
        raise ValueError(f"{exc}; named sets here: {', '.join(sets)}") from None


# --- the cluster ----------------------------------------------------------------------------


def make_cluster(gpus: str, fake: bool):
    """dask-cuda's one-worker-per-GPU cluster; with `fake`, a CPU LocalCluster (threads)."""
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    if fake:
        from distributed import LocalCluster

        n = 2 if gpus == "all" else int(gpus)
        return LocalCluster(n_workers=n, threads_per_worker=1, processes=False, dashboard_address=":0")
    try:
        from dask_cuda import LocalCUDACluster
    except ImportError as exc:
        raise SystemExit(f"dask-cuda is needed for a GPU search ({exc}); on the GPU machine "
                         "`source .whl-tuning/prelude.sh` first, or --fake for a CPU dry run") from None
    kw = {} if gpus == "all" else {"CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in range(int(gpus)))}
    return LocalCUDACluster(threads_per_worker=1, dashboard_address=":0", **kw)


# --- recording ------------------------------------------------------------------------------


class Recorder:
    """Keeps every row a task returns and rewrites the run's tables after each (nothing measured is lost)."""

    TABLES = {"trial": "tuning.parquet", "aa": "aa.parquet", "heldout": "heldout.parquet"}

    def __init__(self, rec: records.RunRecord):
        self.rec = rec
        self.rows = {name: [] for name in self.TABLES.values()}
        self.samples: list = []

    def add(self, rows: list, samples: list) -> None:
        import pandas as pd

        from lab.studies.tuning.dispatch import shape_class

        touched = set()
        for r in rows:
            if "D" in r and r.get("D") == r.get("D"):
                r.setdefault("shape_class", shape_class(r["D"], r["causal"], r["S"]))
            name = self.TABLES.get(r.get("kind"))
            if name:
                self.rows[name].append(r)
                touched.add(name)
        for name in touched:
            self.rec.write_table(name, pd.DataFrame(self.rows[name]))
        if samples:
            self.samples += samples
            self.rec.write_table("samples.parquet", pd.DataFrame(self.samples))

    def frame(self, table: str):
        import pandas as pd

        return pd.DataFrame(self.rows[table])


# --- phases ---------------------------------------------------------------------------------


def _gather(client, futures: dict, recorder: Recorder) -> list:
    """Results of pinned tasks, recorded as they come; a lost task becomes an error row."""
    from distributed import as_completed

    out = []
    for fut in as_completed(list(futures)):
        try:
            res = fut.result()
        except Exception as exc:  # noqa: BLE001
            res = {"rows": [{**futures[fut], "status": "error", "reason": f"{type(exc).__name__}: {exc}"}],
                   "samples": []}
        recorder.add(res["rows"], res["samples"])
        from lab.studies.tuning.search import restart_poisoned

        restart_poisoned(client, res["rows"])
        out.append(res)
    return out


def starting_configs(sp, head_dims, trials: int, seed: int, sampler: str = "tpe", first: dict | None = None
                     ) -> dict[int, list]:
    """The configurations a search proposes first, per head dim: none where the searched head dims' legal
    configurations are at most PREBUILD_MAX (all of them are prebuilt; the sampler finds them); else `first`
    ({head dim: configurations}, committed_configs': the committed table's, so that a later search measures
    them again and its held-out check judges them beside its own), then a seeded sample of legal ones
    (besides each head dim's default, which is proposed first), so that most of a large space's trials are
    legal and prebuilt: half the trials shared out among the head dims (the sampler proposes the other half,
    learning from these), or, for the random sampler, every trial (a random search over the legal
    configurations alone, all of them compiled at once on the host's cores before the GPUs start). A head
    dim with fewer legal configurations than its share leaves the rest to the others."""
    import random

    if sum(len(sp.legal(d)) for d in head_dims) <= PREBUILD_MAX:
        return {}
    share = trials - len(head_dims) if sampler == "random" else trials // 2
    pools = {}
    for d in head_dims:
        default = sp.default(d)
        pools[d] = [c for c in sp.legal(d) if c != default]
    out, left = {}, max(share, len(head_dims))
    for k, d in enumerate(sorted(head_dims, key=lambda d: (len(pools[d]), d))):  # the smallest pools first
        take = min(len(pools[d]), max(1, left // (len(head_dims) - k)))
        given = [c for c in (first or {}).get(d, []) if c in pools[d]][:take]
        rest = [c for c in pools[d] if c not in given]
        out[d] = given + random.Random(seed * 1000 + d).sample(rest, take - len(given))
        left -= take
    return {d: out[d] for d in head_dims}


def committed_configs(sp, table: dict) -> dict[int, list]:
    """The configurations of a committed dispatch table (lab.studies.tuning.dispatch.read_table) that belong to
    space `sp`, per head dim: {} for a table of another step or an empty one."""
    out: dict[int, list] = {}
    if table.get("variant") != sp.variant:
        return out
    for cls, entry in sorted(table.get("classes", {}).items()):
        d = int(cls.split("-")[0][1:])  # "D64-full-short" -> 64 (lab.studies.tuning.dispatch.shape_class)
        cfg = sp.parse_impl(entry["impl"], d)
        if cfg not in out.setdefault(d, []):
            out[d].append(cfg)
    return out


def run_prebuild(client, p: TuneParams, sp, shapes: list, rec, backend, progress, starting=None) -> float:
    """Every legal configuration of the searched head dims (or, for a space of more than PREBUILD_MAX,
    the search's `starting` configurations), compiled in parallel on one worker's host (nvcc runs on the
    CPU): trials then load cached builds. Returns the seconds it took."""
    from lab.studies.tuning.worker import prebuild

    wanted = ([c for cs in starting.values() for c in cs] if starting
              else [c for d in sorted({s[3] for s in shapes}) for c in sp.legal(d)])
    configs = {sp.impl_name(c): sp.defines(c) for c in wanted}
    configs.pop(p.variant, None)
    progress(f"  prebuilding {len(configs)} configurations + the default"
             + (" (a seeded sample of a large space, proposed first)" if starting else "") + " ...")
    try:
        res = client.submit(prebuild, p.variant, configs, backend, pure=False).result()
    except Exception as exc:  # noqa: BLE001 - a lost worker: the trials build for themselves
        res = {"seconds": 0.0, "builds": {"error": f"{type(exc).__name__}: {exc}"}}
    rec.write_json("prebuild.json", res)
    failed = [k for k, v in res["builds"].items() if isinstance(v, dict) and not v["ok"]]
    progress(f"  prebuild {res['seconds']:.1f} s; {len(failed)} failed (recorded as trials if proposed)")
    return res["seconds"]


def run_aa(client, p: TuneParams, shapes: list, run_id: str, recorder: Recorder, backend) -> None:
    """The default against itself on every worker, one task per head dim, pinned to the worker."""
    from lab.studies.tuning.worker import Task, run_task

    per_dim = {}
    for sh in shapes:
        per_dim.setdefault(sh[3], sh)
    futures = {}
    for w in client.scheduler_info()["workers"]:
        for i, sh in enumerate(per_dim.values()):
            task = Task(kind="aa", run_id=run_id, variant=p.variant, shape=tuple(sh), impl=p.variant,
                        modes=tuple(p.modes.split(",")), rule=p.rule(), seed=p.seed + i)
            fut = client.submit(run_task, task, backend, workers=[w], allow_other_workers=False, pure=False)
            futures[fut] = {"kind": "aa", "run_id": run_id, "worker_address": w}
    _gather(client, futures, recorder)
    across = across_gpu_rows(recorder.samples, p.variant)
    recorder.add(across, [])


def across_gpu_rows(samples: list, variant: str) -> list:
    """Per A/A shape and mode, each GPU's default against the lowest-numbered GPU's (a speedup:
    > 1 means this GPU ran the default faster)."""
    import pandas as pd

    from lab.measure import stats

    df = pd.DataFrame(samples)
    if df.empty:
        return []
    df = df[(df["kind"] == "aa") & (df["impl"] == variant) & (~df["throttled"].astype(bool))]
    rows = []
    for (B, H, S, D, causal, mode), g in df.groupby(["B", "H", "S", "D", "causal", "mode"]):
        per_gpu = {k: grp["latency_us"].to_numpy() for k, grp in g.groupby(["gpu_index", "gpu_uuid", "gpu_name"])}
        ref_key = min(per_gpu)
        for key, xs in per_gpu.items():
            ci = stats.speedup_ci(xs, per_gpu[ref_key])
            rows.append(dict(kind="aa", comparison="across", B=B, H=H, S=S, D=D, causal=bool(causal), mode=mode,
                             gpu_index=key[0], gpu_uuid=key[1], gpu_name=key[2], ref_gpu_index=ref_key[0],
                             status="ok", reason="", median_us=float(pd.Series(xs).median()),
                             ratio_to_default=ci.ratio, ratio_to_default_lo=ci.lo, ratio_to_default_hi=ci.hi))
    return rows


def run_heldout(client, p: TuneParams, table: dict, run_id: str, rec, recorder: Recorder, backend) -> None:
    from lab.studies.tuning.worker import Task, run_task

    check = Task(kind="check", run_id=run_id, variant=p.variant, dispatch=table)
    try:
        res = client.submit(run_task, check, backend, pure=False).result()
    except Exception as exc:  # noqa: BLE001 - recorded; the held-out shapes are then not timed
        res = {"rows": [{"kind": "check", "status": "error", "reason": f"{type(exc).__name__}: {exc}"}]}
    rec.write_json("heldout_check.json", res["rows"])
    shapes = shapes_named(p.heldout_shapes, HELDOUT_SETS)
    if res["rows"][0]["status"] != "ok":
        recorder.add([{"kind": "heldout", "run_id": run_id, "B": s[0], "H": s[1], "S": s[2], "D": s[3],
                       "causal": s[4], "status": "not_timed", "reason": "tuned dispatch failed the full grid: "
                       + str(res["rows"][0].get("reason"))} for s in shapes], [])
        return
    futures = {}
    for i, sh in enumerate(shapes):
        task = Task(kind="heldout", run_id=run_id, variant=p.variant, shape=tuple(sh), dispatch=table,
                    modes=("hot",), rule=p.rule(), seed=p.seed + 500 + i)
        futures[client.submit(run_task, task, backend, pure=False)] = {"kind": "heldout", "run_id": run_id}
    _gather(client, futures, recorder)


def tune(p: TuneParams, progress=print, client=None, backend=None, root=None) -> records.RunRecord:
    """One tuning run into a new folder under data/tuning/ (or `root`)."""
    from lab.studies.tuning import dispatch as td
    from lab.studies.tuning.search import Search, SearchSettings
    from lab.studies.tuning.space import space

    sp = space(p.variant).restricted(p.knobs)
    shapes, not_taken = taken_shapes(p.variant, shapes_named(p.shapes, TUNING_SETS))
    held, held_not_taken = taken_shapes(p.variant, shapes_named(p.heldout_shapes, HELDOUT_SETS))
    not_taken.update(held_not_taken)
    for spec, why in not_taken.items():
        progress(f"  shape {spec} not taken: {why}")
    if not shapes:
        raise ValueError(f"no tuning shape of {p.shapes!r} is taken by {p.variant}: " + "; ".join(not_taken.values()))
    if overlap := set(shapes) & set(held):
        raise ValueError(f"held-out shapes must not be tuning shapes: {sorted(overlap)}")
    if backend is None:
        from lab.studies.tuning.fake import FakeBackend
        from lab.studies.tuning.worker import GpuBackend

        backend = FakeBackend if p.fake else GpuBackend
    root = root or (FAKE_DIR if p.fake else records.TUNING_DIR)
    root.mkdir(parents=True, exist_ok=True)
    rec = records.RunRecord(root=root)
    recorder = Recorder(rec)
    rec.write_json("params.json", {**asdict(p), "shape_list": shapes, "heldout_list": held,
                                   "stop_rule": p.rule(), "backend": getattr(backend, "__name__", str(backend)),
                                   "not_taken": not_taken})
    own = client is None
    cluster = make_cluster(p.gpus, p.fake) if own else None
    if own:
        from distributed import Client

        client = Client(cluster)
    try:
        return _phases(p, sp, shapes, rec, recorder, client, backend, progress, td, Search, SearchSettings)
    except BaseException as exc:
        rec.finish("incomplete", error=f"{type(exc).__name__}: {exc}")
        raise
    finally:
        if own:
            client.close()
            cluster.close()


def _phases(p, sp, shapes, rec, recorder, client, backend, progress, td, Search, SearchSettings):
    t_start = time.perf_counter()
    workers = client.run(_worker_env) if not p.fake else {w: {"fake": True} for w in client.scheduler_info()["workers"]}
    rec.write_json("env.json", {"client": _client_env(), "workers": workers})
    n = len(client.scheduler_info()["workers"])
    progress(f"tuning run {rec.run_id}: {n} worker(s), shapes {p.shapes}, {p.trials} trials, sampler {p.sampler}")
    first = committed_configs(sp, td.read_table(variant=p.variant)) if not p.fake else {}
    starting = starting_configs(sp, sorted({s[3] for s in shapes}), p.trials, p.seed, p.sampler, first)
    prebuild_s = run_prebuild(client, p, sp, shapes, rec, backend, progress, starting) if p.prebuild else 0.0
    t0 = time.perf_counter()
    run_aa(client, p, shapes, rec.run_id, recorder, backend)
    aa_s = time.perf_counter() - t0
    settings = SearchSettings(variant=p.variant, shapes=shapes, trials=p.trials, sampler=p.sampler, seed=p.seed,
                              modes=tuple(p.modes.split(",")), rule=p.rule(), budget_s=p.budget_s, prune=p.prune,
                              task_timeout_s=p.task_timeout_s, storage_path=str(rec.path("study.journal")),
                              enqueue={d: [c.as_dict() for c in cs] for d, cs in starting.items()})
    search = Search(client, sp, settings, rec.run_id, recorder.add, backend, progress)
    summary = search.run()
    table = td.choose_table(recorder.frame("tuning.parquet"), rec.run_id, p.variant, settings.modes[0])
    rec.write_json("dispatch.json", table)
    t0 = time.perf_counter()
    if p.heldout:  # a class the held-out shapes call overfitted keeps the default in the committed table
        run_heldout(client, p, table, rec.run_id, rec, recorder, backend)
        table = td.without_overfitted(table, recorder.frame("heldout.parquet"))
        rec.write_json("dispatch_committed.json", table)
    if p.update_dispatch and not p.fake:
        td.write_table(table, td.dispatch_path(p.variant))
    heldout_s = time.perf_counter() - t0
    total = time.perf_counter() - t_start
    rec.write_json("wall.json", {"workers": n, "gpus_requested": p.gpus, "prebuild_s": prebuild_s, "aa_s": aa_s, "search_s": summary["seconds"],
                                 "heldout_s": heldout_s, "total_s": total, "trials": summary["trials"],
                                 "submitted": summary["submitted"],
                                 "trials_per_min": 60 * summary["submitted"] / max(summary["seconds"], 1e-9)})
    rec.finish("complete", best=summary["best"])
    progress(f"search: {summary['submitted']} trials measured ({summary['trials']} asked) in "
             f"{summary['seconds']:.1f} s on {n} worker(s); total {total:.1f} s")
    return rec


def _worker_env() -> dict:
    from lab.measure.clocks import gpu_identity

    return {**records.environment(), **gpu_identity()}


def _client_env() -> dict:
    return {"git_sha": records.git_sha(), "git_dirty": records.git_dirty(), "python": sys.version.split()[0],
            "host": os.uname().nodename}
