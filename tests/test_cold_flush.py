"""The cold mode's L2 flush (lab.measure.timing.L2Flusher): the read flush only reads its buffer, the write flush
(the runs before env.json's cold_flush) overwrites it, flush_probe reads the probe with and without the flush between;
and what the report says of each (the methodology's sentence, the decode section's cold line). No GPU: a fake torch."""
from __future__ import annotations

import types

import pytest

from lab.measure import timing
from lab.report.sections.decode import cold_flush_line
from lab.report.sections.method import cold_flush_words

L2 = 50 << 20


class FakeBuffer:
    def __init__(self, n, log):
        self.n, self.log = n, log

    def numel(self):
        return self.n

    def view(self, dtype):
        assert dtype == "int32"
        return types.SimpleNamespace(amax=lambda: self.log.append(("read", self.n)))

    def fill_(self, value):
        self.log.append(("write", self.n))


@pytest.fixture
def fake_torch(monkeypatch):
    log = []
    torch = types.SimpleNamespace(uint8="uint8", int32="int32",
                                  zeros=lambda n, dtype, device: FakeBuffer(n, log),
                                  empty=lambda n, dtype, device: FakeBuffer(n, log))
    monkeypatch.setattr(timing, "_torch", lambda: torch)
    monkeypatch.setattr(timing, "l2_bytes", lambda: L2)
    return log


def test_the_read_flush_reads_twice_the_l2_and_writes_nothing(fake_torch):
    flush = timing.L2Flusher()
    assert flush.kind == "read" == timing.COLD_FLUSH
    flush()
    flush()
    assert fake_torch == [("read", 2 * L2)] * 2


def test_the_write_flush_overwrites_twice_the_l2(fake_torch):
    timing.L2Flusher("write")()
    assert fake_torch == [("write", 2 * L2)]


def test_an_unknown_flush_is_refused_with_the_kinds():
    with pytest.raises(ValueError, match="L2Flusher kind 'none': one of read, write"):
        timing.L2Flusher("none")


def test_the_probe_dirties_half_the_l2_then_reads_it_with_and_without_the_flush(fake_torch, monkeypatch):
    """Each sample: the probe overwritten, the flush or not, then the probe read; the medians come back by name."""
    def timed_blocks(n, body, before=None, hold="default"):
        out = []
        for _ in range(n):
            fake_torch.clear()
            before()
            body()
            out.append(len(fake_torch))  # 3 events with the flush between, 2 without
        assert hold is None
        return out

    monkeypatch.setattr(timing, "timed_blocks", timed_blocks)
    flush = timing.L2Flusher()
    probe = timing.flush_probe(flush, repeats=3)
    assert probe == {"kind": "read", "probe_bytes": L2 // 2, "l2_read_us": 2, "flushed_read_us": 3}
    fake_torch.clear()
    timing.flush_probe(flush, repeats=1)
    assert fake_torch == [("write", L2 // 2), ("read", 2 * L2), ("read", L2 // 2)]  # the last sample: flushed


def test_the_methodology_names_the_flush_the_run_recorded():
    assert cold_flush_words({"kind": "read"}).startswith("read a buffer of twice the L2 before every launch, which "
                                                         "evicts the launch's data and leaves no dirty lines")
    for older in (None, {}, {"kind": "write"}):
        assert cold_flush_words(older).startswith("overwrote a buffer of twice the L2 before every launch, which "
                                                  "leaves up to the L2's size of dirty lines")


def _row(impl, B, mode, median):
    return dict(impl=impl, B=B, H=32, H_kv=8, D=128, cache_len=8192, q_len=1, mixed=False, page_size=0, dtype="bf16",
                mode=mode, median_us=median)


def test_the_decode_sections_cold_line_reads_the_excess_at_streaming_shapes_only():
    """Cold minus hot over the (shape, implementation) pairs whose cache streams: 12 and 10 at B = 8, 4 at B = 16
    (median 10, range 4 to 12); B = 2's pair does not stream and is left out (its 30 would be the range's top)."""
    from lab.kernels.decode import DecodeShape

    rows = [_row("end", 8, "hot", 66.0), _row("end", 8, "cold", 78.0), _row("cudnn", 8, "hot", 67.0),
            _row("cudnn", 8, "cold", 77.0), _row("end", 16, "hot", 100.0), _row("end", 16, "cold", 104.0),
            _row("end", 2, "hot", 20.0), _row("end", 2, "cold", 50.0)]
    streams = {DecodeShape(B, 32, 8, 128, 8192, dtype="bf16").id: B != 2 for B in (2, 8, 16)}
    d = {"rows": rows, "streams": streams}
    line = cold_flush_line(d, None)
    assert "this run overwrote a buffer of twice the L2" in line
    assert "the cold median is 10.0 µs above the hot one (median over 3 implementation × shape pairs; 4.0 to 12.0)" \
        in line and "target 1's cold verdicts below include" in line
    probe = {"kind": "read", "probe_bytes": 31_457_280, "l2_read_us": 5.04, "flushed_read_us": 9.96}
    line = cold_flush_line(d, probe)
    assert "this run read a buffer of twice the L2" in line and "write-back" not in line
    assert "a probe of 31.5 MB, overwritten and then read, took 5.0 µs from the L2 and 10.0 µs after the flush" in line
    line = cold_flush_line(d, {"kind": "read", "error": "RuntimeError: no GPU"})
    assert "its probe failed: RuntimeError: no GPU" in line


def test_a_run_without_the_record_flushed_by_overwriting():
    assert timing.recorded_flush({}) == "write" and timing.recorded_flush({"cold_flush": None}) == "write"
    assert timing.recorded_flush({"cold_flush": {"kind": "read", "error": "x"}}) == "read"


def test_the_replicate_check_says_where_the_two_runs_flushed_differently():
    from lab.report.replication import flush_note

    old, new = types.SimpleNamespace(env={}), types.SimpleNamespace(env={"cold_flush": {"kind": "read"}})
    assert flush_note(old, old) == "" and flush_note(new, new) == ""
    note = flush_note(new, old)
    assert note.startswith("The two runs emptied the L2 differently before each cold sample (A read a buffer")
    assert "B overwrote one, leaving dirty lines" in note


def test_the_threats_name_the_overwrite_a_failed_probe_and_a_probe_that_shows_no_eviction():
    from lab.report.validity import FLUSH_PROBE_FLOOR, cold_flush_threat

    assert cold_flush_threat(None).startswith("The cold flush overwrote a buffer of twice the L2")
    assert "flush's probe failed (RuntimeError: x)" in cold_flush_threat({"kind": "read", "error": "RuntimeError: x"})
    evicts = {"kind": "read", "probe_bytes": 1, "l2_read_us": 5.0, "flushed_read_us": 5.0 * FLUSH_PROBE_FLOOR}
    assert cold_flush_threat(evicts) is None  # at the floor: shown
    warm = {**evicts, "flushed_read_us": 5.0 * FLUSH_PROBE_FLOOR - 0.01}
    assert "does not show the flush emptying the L2" in cold_flush_threat(warm)


def test_the_threats_say_the_whole_of_each_sentence():
    """The threats' sentences word for word (a change to any of them is a change to what the report claims), and a
    failed probe's message cut at 200 characters."""
    from lab.report.validity import cold_flush_threat

    assert cold_flush_threat({"kind": "write"}) == (
        "The cold flush overwrote a buffer of twice the L2, leaving up to the L2's size of dirty lines that each cold "
        "launch wrote back beside its own traffic: the memory-bound calls pay it most (the decode section reads it off "
        "them; data/explorations/2026-12-04-cold-flush-writeback), and their cold ratios lean towards 1. Later runs "
        "read the buffer instead.")
    long = "E" * 300
    assert cold_flush_threat({"kind": "read", "error": long}) == (
        f"The cold flush's probe failed ({'E' * 200}): that the flush empties the L2 is not shown.")
    assert cold_flush_threat({"kind": "read", "l2_read_us": 5.0, "flushed_read_us": 5.0}) == (
        "The cold flush's probe read 5.0 µs after the flush against 5.0 µs from the L2 (under 1.1x): it does not "
        "show the flush emptying the L2, so cold rows may have found their inputs there.")


def test_the_cold_excess_needs_a_streaming_pair_in_both_modes():
    from lab.report.sections.decode import cold_excess

    rows = [_row("end", 8, "hot", 66.0), _row("end", 8, "cold", 78.0)]
    assert cold_excess({"rows": rows}) is None  # no streams record: nothing known to stream
    assert cold_excess({"rows": rows, "streams": {}}) is None
