"""The worker side of a tuning search: one task = one configuration on one shape, on this GPU.

A task (`Task`) is built by the client (lab.studies.tuning.search) and run by `run_task` on a dask
worker that owns one GPU (dask-cuda sets its CUDA_VISIBLE_DEVICES). `run_task` never raises: a
constraint it finds, a failed build, register spills, a failed correctness check, a launch
error or any exception becomes a row with a status and a reason. The GPU work goes through a
backend (`GpuBackend` here; `lab.studies.tuning.fake.FakeBackend` on a CPU), so the logic around it
(what is checked in which order, how ratios are formed) is the same code under test and on a GPU.

Kinds of task:
  trial    build (cached, under a file lock), reject spills, check on the quick grid (first
           shape of a trial only), then time the configuration interleaved with the default
           configuration and SDPA flash + cuDNN on one shape: ratios within one GPU
  aa       the default configuration against itself on one shape (this GPU's noise floor)
  check    the tuned dispatch on the full correctness grid
  heldout  the tuned dispatch against the default on one held-out shape, interleaved
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import traceback
from dataclasses import dataclass, field

from lab.measure.clocks import gpu_identity

SDPA_PEERS = ("flash", "cudnn")  # the faster of the two is the trial's SDPA reference


@dataclass
class Task:
    kind: str  # trial | aa | check | heldout
    run_id: str
    variant: str
    shape: tuple = ()  # (B, H, S, D, causal)
    trial: int = -1
    step: int = 0  # index of the shape within the trial's shapes
    impl: str = ""
    defines: dict = field(default_factory=dict)
    check: bool = False  # correctness-check the configuration before timing
    modes: tuple = ("hot",)
    rule: dict = field(default_factory=dict)  # timing.StopRule fields
    seed: int = 0
    dispatch: dict = field(default_factory=dict)  # heldout/check: the dispatch table


# --- the GPU backend ------------------------------------------------------------------------


class GpuBackend:
    """Builds, checks and times on the GPU this process sees (device 0 of its CUDA_VISIBLE_DEVICES)."""

    def __init__(self):
        from lab.measure.clocks import Clocks

        self.clocks = Clocks()
        self._loaded: dict[str, object] = {}

    def gpu(self) -> dict:
        return gpu_identity()

    def build(self, variant: str, impl: str, defines: dict):
        from lab.kernels import build, variants

        with build_lock(impl):  # two workers building one key must not write one folder at once
            return build.build_variant(variants.get(variant), defines=defines, impl=impl)

    def prebuild(self, variant: str, configs: dict) -> dict:
        """Compile the default and every configuration in parallel on this host's cores (cached)."""
        from lab.kernels import build

        results = build.build_all([variant], configs={i: (variant, d) for i, d in configs.items()},
                                  jobs=os.cpu_count() or 1, progress=lambda s: None)
        return {name: {"ok": r.ok, "cached": r.cached, "seconds": r.seconds, "key": r.key,
                       "ptxas": r.ptxas, "log": r.log[-1500:]} for name, r in results.items()}

    def load(self, result):
        if result.name not in self._loaded:
            self._loaded[result.name] = result.load()
        return self._loaded[result.name]

    def check(self, kernels: dict, full: bool = False) -> list:
        from lab.measure import check

        return list(check.run_grid(kernels, check.grid() if full else check.small_grid()))

    def measure(self, shape: tuple, kernels: dict, peer_backends: tuple, modes, rule: dict, seed: int,
                run_id: str, aa_impl: str | None):
        from lab.kernels.shape import Shape
        from lab.measure import peers, timing
        from lab.studies.measure_shape import measure_shape

        return measure_shape(Shape(*shape), kernels, peers.peers(peer_backends), modes, timing.StopRule(**rule),
                             self.clocks, run_id, aa_impl, seed, progress=lambda s: None)




@contextlib.contextmanager
def build_lock(impl: str):
    """An exclusive file lock per implementation name under build/kernels/.locks (fcntl: the build
    folder is shared on disk by every worker of the host)."""
    import fcntl

    from lab.kernels.build import BUILD_ROOT

    lock_dir = BUILD_ROOT / ".locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / (re.sub(r"[^A-Za-z0-9_.~=-]", "_", impl) + ".lock"), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# --- running a task -------------------------------------------------------------------------

_BACKENDS: dict = {}


def _backend(factory):
    """One backend per worker process and factory (kernels stay loaded between tasks)."""
    key = (factory, worker_name())
    if key not in _BACKENDS:
        _BACKENDS[key] = factory()
    return _BACKENDS[key]


# CUDA errors that poison the process's context: every later call on that GPU fails too, so the
# client restarts the worker (lab.studies.tuning.search.restart_poisoned).
STICKY_CUDA_ERRORS = ("illegal memory access", "illegal address", "unspecified launch failure", "misaligned address",
                      "illegal instruction", "hardware stack error", "device-side assert")


def poisoned(rows: list) -> set:
    """Worker addresses whose task hit a sticky CUDA error."""
    return {r["worker_address"] for r in rows
            if r.get("worker_address") and any(m in str(r.get("reason", "")).lower() for m in STICKY_CUDA_ERRORS)}


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return ""


def worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().name)
    except (ImportError, ValueError):
        return "local"


def run_task(task: Task, backend_factory=GpuBackend) -> dict:
    """{"rows": [...], "samples": [...], "seconds": float}; never raises."""
    t0 = time.perf_counter()
    base = {"run_id": task.run_id, "kind": task.kind, "trial": task.trial, "step": task.step, "impl": task.impl,
            "worker": worker_name(), "worker_address": _worker_address(), **_shape_cols(task.shape)}
    try:
        backend = _backend(backend_factory)
        base.update(backend.gpu())
        body = {"trial": _trial, "aa": _aa, "check": _check, "heldout": _heldout}[task.kind]
        rows, samples = body(task, backend, base)
    except Exception as exc:  # noqa: BLE001 - a failing task is a result, never a crash of the search
        rows = [{**base, "status": "error", "reason": f"{type(exc).__name__}: {exc}",
                 "traceback": traceback.format_exc()[-3000:]}]
        samples = []
    seconds = time.perf_counter() - t0
    for r in rows:
        r.setdefault("seconds", seconds)
    return {"rows": rows, "samples": samples, "seconds": seconds}


def prebuild(variant: str, configs: dict, backend_factory=GpuBackend) -> dict:
    """Task: build every configuration before the search, so trials find cached builds (and a
    search on one GPU and on several compare GPU work, not compile time). Never raises."""
    t0 = time.perf_counter()
    try:
        builds = _backend(backend_factory).prebuild(variant, configs)
    except Exception as exc:  # noqa: BLE001 - trials then build for themselves
        builds = {"error": f"{type(exc).__name__}: {exc}"}
    return {"seconds": time.perf_counter() - t0, "builds": builds}


def _shape_cols(shape: tuple) -> dict:
    if not shape:
        return {}
    B, H, S, D, causal = shape
    return {"B": B, "H": H, "S": S, "D": D, "causal": bool(causal)}


def _failed(base: dict, status: str, reason: str) -> tuple[list, list]:
    return [{**base, "status": status, "reason": reason}], []


def _built(backend, variant: str, impl: str, defines: dict):
    """(kernel, None) or (None, (status, reason))."""
    from lab.studies.tuning.space import spill_reason

    result = backend.build(variant, impl, defines)
    if not result.ok:
        return None, ("build_failed", (result.log or "build failed").strip()[-1500:])
    if reason := spill_reason(result.ptxas):
        return None, ("spills", reason)
    return backend.load(result), None


def _first_failure(results) -> str:
    bad = [r for r in results if r.failed]  # a case the kernel does not take (bf16, grouped K/V) is no failure
    return f"{len(bad)}/{len(results)} cases failed; first: {bad[0].explain()}" if bad else ""


def _trial(task: Task, backend, base: dict):
    default = task.variant
    kernel, why = _built(backend, task.variant, task.impl, task.defines)
    if why:
        return _failed(base, *why)
    if task.check and (why := _first_failure(backend.check({task.impl: kernel}))):
        return _failed(base, "incorrect", why)
    kernels, aa = {task.impl: kernel}, None
    if task.impl != default:
        ref, why = _built(backend, task.variant, default, {})
        if why:
            return _failed(base, "error", f"the default configuration: {why[0]}: {why[1]}")
        kernels[default] = ref
    else:
        aa = default  # the default as a trial: measured against its own twin
    samples, _, notes = backend.measure(task.shape, kernels, SDPA_PEERS, task.modes, task.rule, task.seed,
                                        task.run_id, aa)
    name = task.impl if task.impl != default else default + "__aa"
    return _ratio_rows(task, base, samples, notes, subject=name, reference=default, peers=True), \
        _tag(samples, base)


def _aa(task: Task, backend, base: dict):
    kernel, why = _built(backend, task.variant, task.variant, {})
    if why:
        return _failed(base, *why)
    samples, _, notes = backend.measure(task.shape, {task.variant: kernel}, (), task.modes, task.rule, task.seed,
                                        task.run_id, task.variant)
    return _ratio_rows(task, base, samples, notes, subject=task.variant + "__aa", reference=task.variant,
                       peers=False), _tag(samples, base)


def _dispatch(task: Task, backend):
    from lab.studies.tuning.dispatch import TunedDispatch

    kernels = {}
    for entry in task.dispatch["classes"].values():
        if entry["impl"] not in kernels:
            kernel, why = _built(backend, task.variant, entry["impl"], entry.get("defines", {}))
            if why:
                raise RuntimeError(f"dispatch configuration {entry['impl']}: {why[0]}: {why[1]}")
            kernels[entry["impl"]] = kernel
    default, why = _built(backend, task.variant, task.variant, {})
    if why:
        raise RuntimeError(f"the default configuration: {why[0]}: {why[1]}")
    return TunedDispatch(task.dispatch, kernels, default), default


def _check(task: Task, backend, base: dict):
    tuned, _ = _dispatch(task, backend)
    results = backend.check({tuned.name: tuned}, full=True)
    why = _first_failure(results)
    ran = [r for r in results if not getattr(r, "unsupported", "")]  # not the cases it does not take
    return [{**base, "impl": tuned.name, "status": "incorrect" if why else "ok",
             "reason": why or f"{len(ran)} cases passed" + (f", {len(results) - len(ran)} not taken"
                                                          if len(ran) < len(results) else ""),
             "cases": len(ran)}], []


def _heldout(task: Task, backend, base: dict):
    tuned, default = _dispatch(task, backend)
    kernels = {tuned.name: tuned, task.variant: default}
    samples, _, notes = backend.measure(task.shape, kernels, (), task.modes, task.rule, task.seed, task.run_id, None)
    rows = _ratio_rows(task, {**base, "impl": tuned.name}, samples, notes, subject=tuned.name,
                       reference=task.variant, peers=False)
    cls = tuned.entry_for(task.shape[3], task.shape[4], task.shape[2])
    for r in rows:
        r.update(shape_class=cls["class"], config=cls["impl"])
    return rows, _tag(samples, base)


def _tag(samples: list, base: dict) -> list:
    """Raw samples with the task and the GPU they were measured on."""
    keep = ("trial", "kind", "step", "worker", "gpu_index", "gpu_name", "gpu_uuid")
    return [{**s, **{k: base.get(k) for k in keep}} for s in samples]


def _ratio_rows(task: Task, base: dict, samples: list, notes: dict, subject: str, reference: str,
                peers: bool) -> list:
    """One row per mode: the subject's median and CI, its speedup over the reference and (for
    trials) over the faster SDPA backend, each a ratio of medians with a bootstrap CI."""
    from lab.measure import stats

    rows = []
    for mode in task.modes:
        kept = {}
        for s in samples:
            if s["mode"] == mode and not s["throttled"]:
                kept.setdefault(s["impl"], []).append(s["latency_us"])
        row = {**base, "mode": mode}
        if subject not in kept or reference not in kept:
            errs = notes.get("errors", {}) if notes else {}
            why = errs.get(f"{subject}/{mode}") or errs.get(f"{reference}/{mode}") or "no unthrottled samples"
            rows.append({**row, "status": "launch_error", "reason": why})
            continue
        a, b = kept[subject], kept[reference]
        lo, hi = stats.median_ci(a)
        vs_ref = stats.speedup_ci(a, b, seed=task.seed)
        row.update(status="ok", reason="", n=len(a), median_us=float(_median(a)), ci_lo=lo, ci_hi=hi,
                   default_median_us=float(_median(b)), ratio_to_default=vs_ref.ratio,
                   ratio_to_default_lo=vs_ref.lo, ratio_to_default_hi=vs_ref.hi)
        sdpa = {n: v for n, v in kept.items() if n.startswith("sdpa_")} if peers else {}
        if sdpa:
            best = min(sdpa, key=lambda n: _median(sdpa[n]))
            vs_sdpa = stats.speedup_ci(a, sdpa[best], seed=task.seed)
            row.update(sdpa_impl=best, sdpa_median_us=float(_median(sdpa[best])), ratio_to_sdpa=vs_sdpa.ratio,
                       ratio_to_sdpa_lo=vs_sdpa.lo, ratio_to_sdpa_hi=vs_sdpa.hi)
        rows.append(row)
    return rows


def _median(xs) -> float:
    import statistics

    return statistics.median(xs)

