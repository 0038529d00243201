"""The SM clock through a sustained turn (lab.measure.clocks.ClockTrace, Clocks.during): read by a thread while the
turn runs, averaged over the part the turn keeps (after its settle), recorded with each of the turn's samples
(interleave's clock_mean_mhz, samples.parquet's sm_clock_mean_mhz)."""

import time

from lab.measure import timing
from lab.measure.clocks import Clocks, ClockTrace
from lab.studies import measure_shape
from tests.test_stopping_rule import FakeTime


def test_a_trace_reads_the_clock_while_its_block_runs_and_not_after():
    values = iter([None] + [1500.0] * 10_000)  # a read NVML cannot give (None) is left out
    trace = ClockTrace(lambda: next(values), period_s=0.001)
    with trace:
        time.sleep(0.05)
    n = len(trace.reads)
    assert 5 <= n <= 60 and all(mhz == 1500.0 for _, mhz in trace.reads)
    assert all(0.0 <= t < 1.0 for t, _ in trace.reads)
    time.sleep(0.01)
    assert len(trace.reads) == n  # the thread stopped with the block


def test_the_mean_after_the_settle_leaves_the_earlier_reads_out():
    trace = ClockTrace(lambda: None)
    trace.reads = [(0.05, 1980.0), (0.149, 1900.0), (0.15, 1500.0), (0.3, 1600.0), (0.4, 1400.0)]
    assert trace.mean_after(0.15) == (1500.0 + 1600.0 + 1400.0) / 3
    assert trace.mean_after(0.0) == (1980.0 + 1900.0 + 1500.0 + 1600.0 + 1400.0) / 5
    assert trace.mean_after(0.5) is None


def test_without_nvml_there_is_no_trace():
    clocks = Clocks.__new__(Clocks)
    clocks.handle = None
    assert clocks.during() is None


class Turn:
    """A timer's block of 10 samples (10 fake ms); `settle_ms` makes it a sustained turn."""

    def __init__(self, clock, settle_ms=None, trace_log=None):
        self.clock, self.trace_log = clock, trace_log
        if settle_ms is not None:
            self.settle_ms = settle_ms

    def samples(self, n):
        if self.trace_log is not None:
            self.trace_log.append("sampled")
        self.clock.now += 0.01
        return [100.0] * 10


class TracingClocks:
    """Clocks.read and Clocks.during: each trace logs its opening and closing and gives 1400 + 1000 x the settle it is
    asked for, so the test sees which settle interleave passed."""

    def __init__(self, log):
        self.log, self.traces = log, 0

    def read(self):
        return 1980.0, False

    def during(self):
        self.traces += 1
        log = self.log

        class Trace:
            def __enter__(self):
                log.append("open")
                return self

            def __exit__(self, *exc):
                log.append("close")
                return False

            def mean_after(self, seconds):
                return 1400.0 + 1000.0 * seconds

        return Trace()


def test_interleave_traces_the_sustained_turns_alone_and_averages_after_their_settle(monkeypatch):
    monkeypatch.setattr(timing, "time", FakeTime())
    log = []
    clocks = TracingClocks(log)
    rule = timing.StopRule(rel_ci=0.5, cap_s=1e9, min_samples=10, block=10, min_turns=2)  # two turns a row
    state = timing.interleave({"turn": Turn(timing.time, settle_ms=150.0, trace_log=log)}, rule, clocks=clocks)
    assert len(state["turn"]["samples"]) == 20 and state["turn"]["clock_mean_mhz"] == [1550.0] * 20
    assert log == ["open", "sampled", "close"] * 2 and clocks.traces == 2  # each turn's samples inside its trace
    hot = timing.interleave({"burst": Turn(timing.time)}, rule, clocks=TracingClocks([]))
    assert hot["burst"]["clock_mean_mhz"] == [None] * len(hot["burst"]["samples"])
    plain = timing.interleave({"turn": Turn(timing.time, settle_ms=150.0)}, rule, clocks=None)
    assert plain["turn"]["clock_mean_mhz"] == [None] * 20  # no clocks: nothing traced


def test_the_turns_mean_clock_reaches_the_sample_rows(monkeypatch):
    def interleaved(timers, rule, clocks=None, seed=0, context_of=None):
        return {name: {"samples": [1.0, 2.0], "clock_mhz": [1980.0] * 2, "throttled": [False] * 2, "round": [0, 0],
                       "clock_mean_mhz": [1512.5, 1512.5], "stopped_by": "ci"} for name in timers}

    monkeypatch.setattr(timing, "interleave", interleaved)
    monkeypatch.setattr(timing, "HotTimer", lambda launch: Turn(FakeTime()))
    rule = timing.StopRule(rel_ci=0.005, cap_s=1.0, min_samples=10)
    rows, _ = measure_shape.time_modes({"step": [lambda: None]}, {}, ["hot"], rule, None, 0,
                                       {"errors": {}}, {}, lambda *a: {}, progress=lambda *_: None)
    assert [r["sm_clock_mean_mhz"] for r in rows] == [1512.5, 1512.5]
