"""The GPUs a run's replicates go to (issue 49): on a host of several GPUs, a dask cluster of one worker a
GPU (dask_cuda.LocalCUDACluster, the engine the tuning uses; each worker's CUDA_VISIBLE_DEVICES names its
own GPU first, and a replicate's child process inherits it), handed to lab.studies.replicates.run as a
concurrent.futures.Executor, so that the replicates run side by side, one a GPU at a time. Every
comparison stays within one replicate, and so within one GPU: a ratio is still taken round by round on
one device. With one GPU there is no pool, and the replicates run one after another as before.

    with replicate_pool(gpus=4) as executor:        # None where one GPU
        replicates.run(rec, "timing", executor=executor)

`DASK_SCHEDULER` (an address) sends them to a running cluster instead, so that a study can go past one
host; `fake` gives a CPU cluster of threads, for the tests and a dry run.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time

from lab.studies.params import resolve_count  # what GPUS may say: the run parameter's rule

SCHEDULER_ENV = "DASK_SCHEDULER"


def visible_gpus() -> list[dict]:
    """The GPUs this process may use, as NVML numbers them within CUDA_VISIBLE_DEVICES: index, name and
    power limit (W) each; [] where NVML is not there."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no NVML: no GPU to spread over
        return []
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    indices = [int(x) for x in visible.split(",") if x.strip().isdigit()] if visible else \
        list(range(pynvml.nvmlDeviceGetCount()))
    out = []
    for index in indices:
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        name = pynvml.nvmlDeviceGetName(handle)
        out.append({"index": index, "name": name.decode() if isinstance(name, bytes) else name,
                    "power_limit_w": round(pynvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000)})
    return out


def check_alike(gpus: list[dict]) -> None:
    """ValueError in one line where the GPUs differ in model or power limit: replicates on them would
    measure different machines, and their spread would read as noise."""
    kinds = sorted({(g["name"], g["power_limit_w"]) for g in gpus})
    if len(kinds) > 1:
        raise ValueError("the GPUs differ (" + "; ".join(f"{n} at {w} W" for n, w in kinds) + "): a run spreads its "
                         "replicates over GPUs of one model and power limit only; name them with CUDA_VISIBLE_DEVICES")


def gpu_ids(gpus=1, found: list[dict] | None = None) -> list[str]:
    """The CUDA_VISIBLE_DEVICES entries of the GPUs a stage shares its pieces over (lab.studies.gpu_share):
    one a GPU, in order, where the run uses two or more (alike: check_alike); [] where it uses one.
    `found`: visible_gpus()'s list (the tests give one; where NVML is absent it is empty, and GPUS is
    taken at its word)."""
    found = visible_gpus() if found is None else found
    n = resolve_count(gpus, len(found))
    if n == 1:
        return []
    check_alike(found[:n])
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    return visible.split(",")[:n] if visible else [str(i) for i in range(n)]


def for_run(gpus="all", progress=print, found: list[dict] | None = None, has_dask_cuda=None) -> str:
    """What a run records as its GPUS, settled when it starts: where it would use several GPUs of this
    host, they must be alike (check_alike) and dask-cuda importable (it is not in requirements.txt: GPU
    hosts only). The default, "all", records the count it found, or falls back to one GPU with a line
    saying why; a number asked for by name is refused instead (ValueError naming the fix). A cluster
    address (DASK_SCHEDULER) is taken as given."""
    if os.environ.get(SCHEDULER_ENV):
        return str(gpus)
    try:
        ids = gpu_ids(gpus, found)
    except ValueError as exc:  # GPUs of different models: refused where asked for by number
        if str(gpus) != "all":
            raise
        progress(f"  GPUS=all: {exc}; this run uses one GPU")
        return "1"
    if len(ids) < 2:
        return str(gpus) if str(gpus) != "all" else "1"
    if has_dask_cuda is None:
        import importlib.util

        has_dask_cuda = importlib.util.find_spec("dask_cuda") is not None
    if has_dask_cuda:
        return str(len(ids)) if str(gpus) == "all" else str(gpus)
    if str(gpus) == "all":
        progress(f"  GPUS=all: {len(ids)} GPUs visible, but dask-cuda is not installed (pip install dask-cuda): "
                 "this run uses one GPU")
        return "1"
    raise ValueError(f"GPUS={gpus}: a run on several GPUs needs dask-cuda (pip install dask-cuda), or GPUS=1")


@contextlib.contextmanager
def replicate_pool(gpus=1, fake: bool = False, address: str | None = None):
    """An Executor with one worker a GPU (the module's docstring), or None where the run uses one GPU and
    no cluster address is given. Closed on exit."""
    address = address or os.environ.get(SCHEDULER_ENV)
    ids = []
    if not fake and not address:
        ids = gpu_ids(gpus)
        if not ids:
            yield None
            return
        n = len(ids)
    else:
        n = resolve_count(gpus, 0)
    from distributed import Client

    from lab.kernels.manifest import REPO

    # the workers import spawn_captured from this repository (a worker process starts with this environment)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    cluster = None
    if address:
        client = Client(address)
    elif fake:
        from distributed import LocalCluster

        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=False, dashboard_address=":0")
        client = Client(cluster)
    else:
        from dask_cuda import LocalCUDACluster

        cluster = LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(ids), threads_per_worker=1, dashboard_address=":0")
        client = Client(cluster)
    try:
        yield client.get_executor(pure=False)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


class SharedPool:
    """One replicate pool for the plans of a stage that follow each other (the timing's, then the
    factorial's, with the decode set between them), opened when a plan first asks for it and closed on
    exit: a pool's start and close are a cluster's. In data/checks/2026-11-28-h200x4-gpus-ablation-2 the
    four-GPU factorial took 30.0 s, its replicates at most 6.1 s, and the one-GPU run's factorial 19.4 s
    outside its replicates (builds and checks, no pool): about 4.5 s left for the pool, by subtraction, not
    measured apart. `executor()`: replicate_pool's executor, or None where the run uses one GPU."""

    def __init__(self, gpus=1, opener=None):
        self.gpus, self.opener = gpus, opener or replicate_pool
        self._stack, self._opened, self._executor = contextlib.ExitStack(), False, None

    def __enter__(self) -> "SharedPool":
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def executor(self):
        if not self._opened:
            self._executor = self._stack.enter_context(self.opener(self.gpus))
            self._opened = True
        return self._executor


def worker_gpu() -> str:
    """The GPU this worker's children see first: dask-cuda puts each worker's own GPU first in its
    CUDA_VISIBLE_DEVICES ("" where the variable is not set)."""
    return os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()


MOVE_HOLD_S = 0.5


def hold(seconds: float = MOVE_HOLD_S) -> None:
    """Keep a worker busy a moment (lab.studies.replicates submits this just before a replicate that must move
    to another GPU: the pool gives it the worker it would pick first, often the one the replicate failed on,
    which has just gone idle, and the replicate goes to another)."""
    time.sleep(seconds)


def spawn_captured(run_dir, plan: str, i: int, fake: bool = False, avoid: tuple = ()) -> dict:
    """Replicate i as a child process whose output is kept, not passed on (it runs in a worker of the
    pool, beside the other GPUs' replicates): {"code", "output", "seconds", "gpu"}. The child sees the
    worker's GPU (dask-cuda sets each worker's CUDA_VISIBLE_DEVICES). A worker whose GPU is in `avoid`
    (a GPU a replicate failed on) runs nothing and says so: {"elsewhere": True, ...}, and the replicate
    is handed to the pool again (lab.studies.replicates)."""
    from lab.kernels.manifest import REPO
    from lab.studies.replicate_plan import child_command

    gpu = worker_gpu()
    if gpu and gpu in avoid:
        return {"code": None, "output": "", "seconds": 0.0, "gpu": gpu, "elsewhere": True}
    t0 = time.perf_counter()
    proc = subprocess.run(child_command(run_dir, plan, i, fake), cwd=REPO, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    return {"code": proc.returncode, "output": proc.stdout, "seconds": round(time.perf_counter() - t0, 1), "gpu": gpu}
