"""Per-row statistics over a process pool: a run's summary rows (lab.studies.replicates.merge) and
its leave-one-out calibration (lab.studies.calibration) are thousands of independent bootstraps,
each seeded on its own, so spreading them over the machine's cores gives the serial loop's results
exactly, in order, in a fraction of its time (on the GPU machine they ran on one of 16 cores inside
the timing stage's clock).

`LAB_WORKERS=1` runs everything in the calling process (as do small inputs and one-core machines).
"""

from __future__ import annotations

import multiprocessing
import os
import warnings
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

MAX_WORKERS = 16  # the GPU machines' cores; more buys nothing at a few thousand rows
MIN_ITEMS = 256  # below this, starting interpreters costs more than it saves


def workers() -> int:
    """Worker processes to use: LAB_WORKERS if set, else the usable cores (at most MAX_WORKERS)."""
    if env := os.environ.get("LAB_WORKERS"):
        n = int(env)
        if n < 1:
            raise ValueError(f"LAB_WORKERS={env}: at least 1")
        return n
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


def starmap(fn, arg_tuples: list, min_items: int = MIN_ITEMS, n_workers: int | None = None) -> list:
    """[fn(*args) for args in arg_tuples], in order; over fresh interpreters (spawn: the caller may
    hold a CUDA context, which a forked child must not inherit) where there are at least
    `min_items` of them and more than one worker. `fn` must be picklable (a module's function, or a
    functools.partial of one)."""
    n = workers() if n_workers is None else n_workers
    if n <= 1 or len(arg_tuples) < max(min_items, 2):
        return [fn(*args) for args in arg_tuples]
    n = min(n, len(arg_tuples))
    chunk = max(1, len(arg_tuples) // (4 * n))  # a few chunks a worker: even finish, little pickling
    try:
        with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn")) as pool:
            return list(pool.map(fn, *zip(*arg_tuples), chunksize=chunk))
    except BrokenProcessPool as exc:
        # A spawned interpreter could not start: it re-imports the caller's __main__, which a
        # program read from stdin (or a notebook front end of some kind) does not have as a file.
        # The rows are the same computed here, only slower.
        warnings.warn(f"parallel.starmap: worker processes failed to start ({exc}); computing "
                      f"{len(arg_tuples)} rows in this process", RuntimeWarning, stacklevel=2)
        return [fn(*args) for args in arg_tuples]
