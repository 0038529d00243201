"""The report's "Why round by round" states the clock drift of its own run (largest_clock_drift): the
(shape, mode, replicate) whose mean SM clock fell most from its first round to its last, among those
with rounds enough apart and rows sampled in both."""
from types import SimpleNamespace

import pandas as pd
import pytest

from lab.kernels.shape import Shape
from lab.report.sections.method import _round_pairing, largest_clock_drift

A, B, C = Shape(1, 8, 4096, 128, True), Shape(1, 8, 8192, 128, True), Shape(2, 8, 1024, 64, False)


def _rows(shape, mode, impls, rounds, clock, latency):
    """Samples of `impls` at each round in `rounds`, with clock(round) and latency(impl, round)."""
    return [dict(impl=i, B=shape.B, H=shape.H, S=shape.S, D=shape.D, causal=shape.causal, H_kv=shape.H_kv,
                 dtype=shape.torch_dtype_name, mode=mode, replicate=0, round=r, sm_clock_mhz=clock(r),
                 latency_us=latency(i, r)) for r in rounds for i in impls]


def _samples():
    rows = []
    # A, hot: 1980 -> 1800 MHz over rounds 0-4, both rows 10 % and 20 % slower at the end: median 15 %
    rows += _rows(A, "hot", ["x", "y"], range(5), lambda r: 1980.0 - 45.0 * r,
                  lambda i, r: 100.0 * (1 + (0.1 if i == "x" else 0.2) * (r == 4)))
    # B, cold: a larger fall (300 MHz) but only one row sampled in the last round
    rows += _rows(B, "cold", ["x", "y"], range(4), lambda r: 1980.0, lambda i, r: 50.0)
    rows += _rows(B, "cold", ["x"], [4], lambda r: 1680.0, lambda i, r: 60.0)
    # C, hot: the largest fall (400 MHz) but its rounds only 2 apart
    rows += _rows(C, "hot", ["x", "y"], range(3), lambda r: 1980.0 - 200.0 * r, lambda i, r: 10.0)
    return pd.DataFrame(rows)


def test_the_largest_fall_among_groups_with_rounds_and_rows_enough_is_found():
    d = largest_clock_drift(_samples())
    assert d["shape"] == A and d["mode"] == "hot" and d["replicate"] == 0
    assert d["first_mhz"] == 1980.0 and d["last_mhz"] == 1800.0 and d["rounds"] == 4 and d["rows"] == 2
    assert d["slower"] == pytest.approx(0.15)
    # with the limits lowered, B's and then C's falls win
    assert largest_clock_drift(_samples(), min_rows=1)["shape"] == B
    assert largest_clock_drift(_samples(), min_rows=1, min_rounds=2)["shape"] == C


def test_runs_without_rounds_or_clocks_have_no_drift_and_the_text_says_it_without_numbers():
    assert largest_clock_drift(_samples().drop(columns="round")) is None
    assert largest_clock_drift(_samples().assign(sm_clock_mhz=None)) is None
    assert largest_clock_drift(pd.DataFrame()) is None
    text = _round_pairing(SimpleNamespace(samples=_samples().drop(columns="round")))
    assert "MHz" not in text and "data/explorations/2026-11-26-cold-drift/" in text


def test_the_text_gives_this_runs_drift():
    text = _round_pairing(SimpleNamespace(samples=_samples()))
    assert (f"at {A} hot (replicate 0), the mean SM clock fell from 1980 MHz in the round robin's first round "
            "to 1800 MHz in its last, 4 rounds later, and the 2 rows sampled in both were 15.0 % slower" in text)
    faster = _samples()
    faster.loc[faster["round"] == 4, "latency_us"] = 90.0  # every row faster at the end
    assert "were 10.0 % faster in the last" in _round_pairing(SimpleNamespace(samples=faster))
