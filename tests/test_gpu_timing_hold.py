"""GPU tests of the hold in front of a block of samples (lab.measure.hold): the stream waits until
the host releases it, a hold never released gives up after its timeout and says so, and a block
timed behind the hold reads the same kernel time as one behind the fixed sleep it replaced."""

from __future__ import annotations

import statistics
import time

import pytest

pytestmark = pytest.mark.gpu


def _hold():
    from lab.measure import hold as holds

    h = holds.default()
    assert h is not None, "the hold did not build on a GPU machine"
    return h


def test_the_stream_waits_until_the_host_releases_the_hold():
    import torch

    h = _hold()
    stream = torch.cuda.current_stream()
    after = torch.cuda.Event()
    h.enqueue(stream.cuda_stream)
    after.record(stream)
    time.sleep(0.02)
    held = not after.query()
    h.release()
    after.synchronize()
    assert held, "work behind the hold ran before the release"
    assert not h.timed_out()


def test_a_hold_never_released_times_out_and_says_so(monkeypatch):
    import torch

    h = _hold()
    monkeypatch.setattr(h, "timeout_cycles", 2_000_000)  # about 1 ms
    h.enqueue(torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()  # returns: the kernel gave up
    assert h.timed_out()
    h.release()


def test_samples_behind_the_hold_match_samples_behind_the_sleep():
    import torch

    from lab.measure import timing

    x = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    body = lambda: torch.mm(x, x)  # noqa: E731 - about 0.1-0.3 ms on the GPUs the study runs on
    for hold in (_hold(), None):
        timing.timed_blocks(5, body, hold=hold)  # warm
    held = [s for _ in range(5) for s in timing.timed_blocks(9, body, hold=_hold())]
    slept = [s for _ in range(5) for s in timing.timed_blocks(9, body, hold=None)]
    assert min(held) > 0
    assert statistics.median(held) == pytest.approx(statistics.median(slept), rel=0.05)


def test_a_hot_sample_reads_the_kernels_time_as_launches_on_the_stream_do():
    """HotTimer's per-launch time (graph replays behind the sleep) must match the same launches
    timed by events on the stream behind the hold, derived without the graph. A copy, not a
    matmul: cuBLAS may pick another kernel under graph capture."""
    import torch

    from lab.measure import timing

    x = torch.randn(32 << 20, device="cuda", dtype=torch.float16)  # 64 MB, beyond L2: DRAM-bound
    y = torch.empty_like(x)
    launch = lambda: y.copy_(x)  # noqa: E731
    hot = timing.HotTimer([launch])
    assert hot.reps > 1
    in_graph = hot.samples(27)
    on_stream = [s / hot.reps for _ in range(3)
                 for s in timing.timed_blocks(9, lambda: [launch() for _ in range(hot.reps)], hold=_hold())]
    assert min(in_graph) > 0
    assert statistics.median(in_graph) == pytest.approx(statistics.median(on_stream), rel=0.05)


def test_a_sustained_turn_is_back_to_back_and_keeps_only_its_settled_part():
    """SustainedTimer: one turn is about turn_ms of back-to-back replays (the GPU never idle between them),
    the samples are the replays that start settle_ms or more into it, each the time per launch; the lead-in
    replays every row's graph without keeping anything."""
    import torch

    from lab.measure import timing

    a = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    launch = lambda: a @ a  # noqa: E731  (about 0.1 ms on an H100)
    t = timing.SustainedTimer(launch, turn_ms=60.0, settle_ms=20.0, replay_us=2000.0)
    per_launch = timing.estimate_us(launch)
    timing.sustained_lead_in({"a": t}, seconds=0.2)
    stream = torch.cuda.current_stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(stream)
    samples = t.samples()
    end.record(stream)
    end.synchronize()
    turn_ms = start.elapsed_time(end)
    replay_ms = t.reps * statistics.median(samples) / 1e3
    assert 0.8 * 60.0 <= turn_ms <= 1.5 * 60.0 + replay_ms, turn_ms
    # the replays started 20 ms or more into the turn: about (turn - settle) / replay of them
    assert abs(len(samples) - (turn_ms - 20.0) / replay_ms) <= 2
    assert 0.5 * per_launch <= statistics.median(samples) <= 2.0 * per_launch


def test_the_cold_mode_flushes_by_reading_and_records_its_probe():
    """The read flush runs before each cold sample, and flush_probe (env.json's cold_flush) reports both of its
    reads; what they say about the L2 is a measurement (data/explorations/2026-12-04-cold-flush-writeback), not
    asserted here."""
    import torch

    from lab.measure import timing

    x = torch.ones(1 << 20, device="cuda")
    timer = timing.ColdTimer(lambda: x.mul_(1.0))
    assert timer.flusher.kind == "read" and timer.flusher.buffer.numel() >= 2 * timing.l2_bytes() - 16
    assert all(s > 0 for s in timer.samples(5))
    probe = timing.flush_probe(timer.flusher, repeats=3)
    assert probe["kind"] == "read" and probe["probe_bytes"] == timing.l2_bytes() // 2 // 16 * 16
    assert probe["l2_read_us"] > 0 and probe["flushed_read_us"] > 0
