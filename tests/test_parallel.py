"""CPU tests of lab.measure.parallel: the pool gives the serial loop's rows exactly and in order, runs
serially where it should, and falls back to the serial loop when its workers cannot start."""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import pytest

from lab.kernels.shape import Shape
from lab.measure import parallel, stats
from lab.studies.measure_shape import summary_row


def _replicates(rng, n_reps: int, center: float) -> dict:
    return {r: center * rng.lognormal(0.0, 0.02, size=int(rng.integers(17, 30))) for r in range(n_reps)}


def test_pool_rows_equal_the_serial_loops_in_order():
    # summary.csv's rows and the calibration's leave-one-out rows, the two callers, on synthetic
    # replicates: the bootstraps are seeded per call, so the pool's results are the loop's exactly
    rng = np.random.default_rng(3)
    shape = Shape(4, 16, 512, 64, False)
    rows = [(shape, f"impl{i}", "hot", _replicates(rng, 3, 10.0 + i), "ci", 0, 32) for i in range(12)]
    pairs = [(_replicates(rng, 3, 10.0), _replicates(rng, 3, 11.0)) for _ in range(6)]
    one_pair = functools.partial(stats.leave_one_out, confidence=0.95, n_resamples=200, seed=0)  # as calibration
    serial = [summary_row(*a) for a in rows], [one_pair(*a) for a in pairs]
    pooled = (parallel.starmap(summary_row, rows, min_items=0, n_workers=2),
              parallel.starmap(one_pair, pairs, min_items=0, n_workers=2))
    assert pooled == serial
    assert [r["impl"] for r in pooled[0]] == [f"impl{i}" for i in range(12)]


def test_small_inputs_and_one_worker_stay_in_this_process(monkeypatch):
    def no_pool(*a, **k):
        raise AssertionError("a pool was started")

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", no_pool)
    assert parallel.starmap(math.pow, [(2, 3), (3, 2)], n_workers=8) == [8.0, 9.0]  # below MIN_ITEMS
    many = [(2, i) for i in range(parallel.MIN_ITEMS)]
    assert parallel.starmap(math.pow, many, n_workers=1) == [2.0 ** i for i in range(parallel.MIN_ITEMS)]
    monkeypatch.setenv("LAB_WORKERS", "1")
    assert parallel.starmap(math.pow, many) == [2.0 ** i for i in range(parallel.MIN_ITEMS)]


def test_workers_reads_lab_workers_and_refuses_nonsense(monkeypatch):
    monkeypatch.setenv("LAB_WORKERS", "3")
    assert parallel.workers() == 3
    monkeypatch.setenv("LAB_WORKERS", "0")
    with pytest.raises(ValueError, match="LAB_WORKERS=0: at least 1"):
        parallel.workers()
    monkeypatch.delenv("LAB_WORKERS")
    assert 1 <= parallel.workers() <= parallel.MAX_WORKERS


def test_workers_that_cannot_start_fall_back_to_the_serial_loop_with_a_warning(monkeypatch):
    class Broken:
        def __init__(self, *a, **k):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def map(self, *a, **k):
            raise parallel.BrokenProcessPool("a child process terminated abruptly")

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", Broken)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = parallel.starmap(math.pow, [(2, i) for i in range(5)], min_items=0, n_workers=4)
    assert out == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert any("computing 5 rows in this process" in str(w.message) for w in caught)
