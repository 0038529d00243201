"""CPU tests of the hold in front of a block of timed samples (lab.measure.hold): its source builds
with nvcc into a library with the three entry points timing calls, and lab.measure.timing's block
enqueues every launch between the hold and its release, releases it when a launch raises, and
retakes a block whose hold timed out. The GPU side is tests/test_gpu_timing_hold.py."""

from __future__ import annotations

import subprocess
import types

import pytest

from lab.measure import hold as holds
from lab.measure import timing


def test_the_hold_builds_with_nvcc_and_exports_its_entry_points(tmp_path, monkeypatch):
    monkeypatch.setattr(holds, "BUILD_ROOT", tmp_path)
    path = holds.build(arch="8.0")
    assert path.is_file() and path.parent.parent == tmp_path
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True).stdout
    for name in ("lab_hold_alloc", "lab_hold_free", "lab_hold_enqueue"):
        assert f" T {name}" in symbols, name
    assert holds.build(arch="8.0") == path  # found, not rebuilt
    assert holds.library_path("9.0") != path  # keyed by architecture


def test_a_hold_that_does_not_compile_says_so_with_nvccs_output(tmp_path, monkeypatch):
    broken = tmp_path / "broken.cu"
    broken.write_text("this is not CUDA\n")
    monkeypatch.setattr(holds, "SOURCE", broken)
    monkeypatch.setattr(holds, "REPO", tmp_path)
    monkeypatch.setattr(holds, "BUILD_ROOT", tmp_path / "build")
    with pytest.raises(RuntimeError, match="could not build broken.cu"):
        holds.build(arch="8.0")
    assert not list((tmp_path / "build").rglob("*.so"))


class FakeEvent:
    def __init__(self, log, clock):
        self.log, self.clock, self.t = log, clock, None

    def record(self, stream):
        self.clock[0] += 1.0
        self.t = self.clock[0]
        self.log.append("record")

    def synchronize(self):
        self.log.append("sync")

    def elapsed_time(self, other):
        return (other.t - self.t) * 1e-3  # ms, as torch gives it


class FakeHold:
    def __init__(self, log, timeouts=0):
        self.log, self.timeouts = log, timeouts

    def enqueue(self, stream):
        self.log.append("hold")

    def release(self):
        self.log.append("release")

    def timed_out(self):
        if self.timeouts:
            self.timeouts -= 1
            return True
        return False


@pytest.fixture
def fake_gpu(monkeypatch):
    log, clock = [], [0.0]
    stream = types.SimpleNamespace(cuda_stream=7)
    cuda = types.SimpleNamespace(current_stream=lambda: stream)
    monkeypatch.setattr(timing, "_torch", lambda: types.SimpleNamespace(cuda=cuda))
    monkeypatch.setattr(timing, "_new_event", lambda: FakeEvent(log, clock))
    return log


def test_every_launch_of_a_block_sits_between_the_hold_and_its_release(fake_gpu):
    log = fake_gpu

    def body():
        log.append("launch")

    samples = timing.timed_blocks(3, body, before=lambda: log.append("flush"), hold=FakeHold(log))
    assert log == ["hold", *["flush", "record", "launch", "record"] * 3, "release", "sync"]
    assert samples == pytest.approx([1.0, 1.0, 1.0])  # each start..end pair one tick apart, in us


def test_a_launch_that_raises_still_releases_the_hold(fake_gpu):
    log = fake_gpu

    def body():
        raise RuntimeError("launch failed")

    with pytest.raises(RuntimeError, match="launch failed"):
        timing.timed_blocks(2, body, hold=FakeHold(log))
    assert log[0] == "hold" and log[-1] == "release"


def test_a_block_whose_hold_timed_out_is_taken_again(fake_gpu):
    log = fake_gpu
    launches = []
    samples = timing.timed_blocks(2, lambda: launches.append(1), hold=FakeHold(log, timeouts=1))
    assert log.count("hold") == 2 and log.count("release") == 2 and len(launches) == 4
    assert len(samples) == 2


def test_a_hold_that_keeps_timing_out_fails_the_block_loudly(fake_gpu):
    log = fake_gpu
    with pytest.raises(RuntimeError, match=f"retaken {timing.HOLD_TRIES} times"):
        timing.timed_blocks(2, lambda: None, hold=FakeHold(log, timeouts=timing.HOLD_TRIES))
    assert log.count("hold") == timing.HOLD_TRIES


def test_without_a_hold_the_block_waits_behind_the_fixed_sleep(fake_gpu, monkeypatch):
    log = fake_gpu
    monkeypatch.setattr(timing, "_gpu_sleep", lambda: (lambda: log.append("sleep")))
    timing.timed_blocks(1, lambda: log.append("launch"), hold=None)
    assert log == ["sleep", "record", "launch", "record", "sync"]


def test_a_hold_that_cannot_be_built_falls_back_to_the_sleep_with_a_warning(monkeypatch):
    def no_nvcc(arch=None):
        raise FileNotFoundError("nvcc not found")

    monkeypatch.setattr(holds, "build", no_nvcc)
    holds.default.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="nvcc not found"):
            assert holds.kind() == "sleep"
    finally:
        holds.default.cache_clear()


class _FakeEvent:
    """A CUDA event on a fake clock (clock[0], in µs), its calls appended to log."""

    def __init__(self, clock, log):
        self.clock, self.log = clock, log

    def record(self, stream=None):
        self.t = self.clock[0]
        self.log.append("record")

    def synchronize(self):
        self.log.append("sync")

    def elapsed_time(self, other):
        return (other.t - self.t) * 1e-3


def _fake_cuda(monkeypatch, clock, log):
    """estimate_us on fake events and a fake sleep: the sleep logged, no GPU."""
    monkeypatch.setattr(timing, "_torch", lambda: types.SimpleNamespace(cuda=types.SimpleNamespace(current_stream=lambda: None)))
    monkeypatch.setattr(timing, "_new_event", lambda: _FakeEvent(clock, log))
    monkeypatch.setattr(timing, "_gpu_sleep", lambda: (lambda: log.append("sleep")))


@pytest.mark.parametrize("launch_us, timed", [(2000.0, 1), (1000.0, 1), (300.0, 4), (600.0, 2), (10.0, 5)])
def test_an_estimate_times_as_many_launches_as_make_about_a_millisecond_at_most_five(monkeypatch, launch_us, timed):
    """A warm-up launch, timed, then one block behind the sleep of ceil(1000 / its time) launches, one
    to five; the estimate is the block's mean. Each launch here takes launch_us on a fake clock."""
    log, clock = [], [0.0]

    def launch():
        clock[0] += launch_us
        log.append("launch")

    _fake_cuda(monkeypatch, clock, log)
    assert timing.estimate_us(launch) == pytest.approx(launch_us)
    assert log == ["record", "launch", "record", "sync", "sleep", "record", *["launch"] * timed, "record", "sync"]


def test_an_estimate_whose_warmup_held_host_work_times_one_launch(monkeypatch):
    """A first call that compiles puts seconds between the warm-up's events: the block is one launch,
    and the estimate is that launch's time, not the warm-up's."""
    clock, calls = [0.0], []

    def launch():
        clock[0] += 2_000_000.0 if not calls else 50.0  # the first call: 2 s of compiling
        calls.append(1)

    _fake_cuda(monkeypatch, clock, [])
    assert timing.estimate_us(launch) == pytest.approx(50.0) and len(calls) == 2
