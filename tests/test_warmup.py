"""flex_attention's compiles made beside the correctness stage (lab.studies.warm, lab.pipeline's
FlexWarmup): started before correctness, waited for before timing, never able to fail a run."""
import dataclasses
import os
import subprocess

import pytest

from lab import pipeline
from lab.kernels.shape import Shape
from lab.studies import warm
from lab.studies.params import RunParams


class FakeProc:
    def __init__(self, hang=False):
        self.hang, self.killed, self.waits = hang, False, []

    def wait(self, timeout=None):
        self.waits.append(timeout)
        if self.hang and not self.killed:
            raise subprocess.TimeoutExpired("warm", timeout)
        return 0

    def kill(self):
        self.killed = True


class Recorder:
    """A FlexWarmup stand-in that logs its calls into the same list as the notebooks."""

    def __init__(self, log):
        self.log = log

    def start(self):
        self.log.append("warm:start")

    def join(self):
        self.log.append("warm:join")
        return 4.5  # seconds waited


def _run(names):
    log = []
    pipeline.run_stages(names, None, "RUN", run_notebook=lambda name, out, params: log.append(name) or 1.0,
                        warmup=Recorder(log), on_wait=lambda s: log.append(f"waited {s}"))
    return log


def test_the_warmup_runs_beside_the_correctness_stage_and_ends_before_the_timing():
    assert _run(pipeline.MEASURE[1:]) == ["01_build.ipynb", "warm:start", "02_correctness.ipynb", "warm:join",
                                          "waited 4.5", "03_timing.ipynb", "04_profile.ipynb"]


def test_the_wait_for_the_warmup_is_timed_and_recorded_between_the_stages(tmp_path):
    from lab.measure import records

    ticks = iter([10.0, 13.25])
    w = pipeline.FlexWarmup("RUN", popen=lambda cmd: FakeProc(), clock=lambda: next(ticks))
    assert w.join() is None  # not started: nothing waited for, nothing to record
    w.start()
    assert w.join() == 3.25
    rec = records.RunRecord(run_id="20990101T000000Z-wait", root=tmp_path)
    rec.write_json("stages.json", {"correctness_s": 60.0, "parts": {"timing": {"ceilings_s": 2.0}}})
    pipeline.record_between(rec, "flex_warmup_wait_s", 3.25)
    assert rec.read_json("stages.json") == {"correctness_s": 60.0, "parts": {"timing": {"ceilings_s": 2.0}},
                                            "between": {"flex_warmup_wait_s": 3.2}}


def test_no_warmup_without_both_the_correctness_and_the_timing_stage():
    assert _run(["01_build.ipynb", "02_correctness.ipynb"]) == ["01_build.ipynb", "02_correctness.ipynb"]
    assert _run(["03_timing.ipynb", "04_profile.ipynb"]) == ["03_timing.ipynb", "04_profile.ipynb"]


def test_an_overrunning_warmup_is_stopped_and_the_run_goes_on(capsys):
    proc = FakeProc(hang=True)
    w = pipeline.FlexWarmup("RUN", popen=lambda cmd: proc, wait_s=7)
    w.start()
    w.join()
    assert proc.killed and proc.waits[0] == 7 and "stopped after 7 s" in capsys.readouterr().out
    w.join()  # a second join is a no-op


def test_a_warmup_that_cannot_start_is_only_reported(capsys):
    def refuse(cmd):
        raise OSError("no such file")

    w = pipeline.FlexWarmup("RUN", popen=refuse)
    w.start()
    w.join()
    assert "not started: no such file" in capsys.readouterr().out


def test_the_warmup_command_names_the_run():
    seen = []
    w = pipeline.FlexWarmup("20990101T000000Z-abc", popen=lambda cmd: seen.append(cmd) or FakeProc())
    w.start()
    w.join()
    assert seen[0][1:] == ["-m", "lab.studies.warm", "20990101T000000Z-abc"]


def test_warm_flex_compiles_each_shape_once_and_records_failures_without_stopping():
    shapes = [Shape(1, 2, 64, 64, False), Shape(1, 2, 64, 128, True), Shape(2, 8, 128, 64, True, 2, "bf16")]
    calls, ticks = [], iter(range(100))

    def bind(shape):
        def launch():
            calls.append(shape.id)
            if shape.D == 128:
                raise RuntimeError("no kernel for this\nsecond line")
        return launch

    record = warm.warm_flex(shapes, bind=bind, synchronize=lambda: calls.append("sync"), clock=lambda: next(ticks))
    assert calls == [shapes[0].id, "sync", shapes[1].id, shapes[2].id, "sync"]
    assert [r["shape"] for r in record["shapes"]] == [s.id for s in shapes]
    assert record["failed"] == 1 and record["shapes"][1]["error"] == "RuntimeError: no kernel for this"
    assert [r["error"] for r in record["shapes"]][::2] == ["", ""]
    assert record["shapes"][0]["seconds"] == 1 and record["seconds"] == 7  # ticks: 0 | 1,2 | 3,4 | 5,6 | 7


def test_only_runs_that_time_flex_attention_warm_it():
    """The prefill shapes, then the decode set's shapes of a contiguous cache (the decode peer takes no paged one)."""
    p = RunParams.from_text(shapes="canonical", decode="")
    assert warm.shapes_to_warm(p) == list(p.shapes) and len(p.shapes) == 7
    assert warm.shapes_to_warm(RunParams.from_text(shapes="canonical", peers="flex_attention,sdpa_cudnn",
                                                   decode="")) == list(p.shapes)
    with_decode = RunParams.from_text(shapes="canonical")
    contiguous = [s for s in with_decode.decode_shapes if "page" not in s.spec]
    assert len(with_decode.decode_shapes) == 19 and len(contiguous) == 15
    assert warm.shapes_to_warm(with_decode) == list(p.shapes) + contiguous
    assert warm.shapes_to_warm(RunParams.from_text(shapes="canonical", peers="sdpa_cudnn")) == []
    assert warm.shapes_to_warm(dataclasses.replace(p, peers=None)) == []  # a run from before peers.json: SDPA only


def test_a_wait_that_cannot_be_recorded_is_only_reported(capsys):
    log = []
    pipeline.run_stages(["02_correctness.ipynb", "03_timing.ipynb"], None, "20990101T000000Z-nowhere",
                        run_notebook=lambda name, out, params: log.append(name) or 1.0, warmup=Recorder(log))
    assert log == ["warm:start", "02_correctness.ipynb", "warm:join", "03_timing.ipynb"]
    assert "(4.5 s) not recorded: no run '20990101T000000Z-nowhere'" in capsys.readouterr().out


def test_the_shapes_are_dealt_round_robin_to_the_workers_none_left_empty():
    shapes = list("abcde")
    assert warm.shards(shapes, 2) == [["a", "c", "e"], ["b", "d"]]
    assert warm.shards(shapes, 1) == [shapes]
    assert warm.shards(shapes[:2], 4) == [["a"], ["b"]]  # fewer shapes than workers: one process each
    assert warm.shards([], 2) == []
    with pytest.raises(ValueError, match="at least one process"):
        warm.shards(shapes, 0)


def test_the_parallel_warmup_keeps_the_runs_order_and_a_dead_process_fails_only_its_shapes():
    from concurrent.futures import ThreadPoolExecutor

    shapes = [Shape(1, 2, 64 * (i + 1), 64, False) for i in range(5)]
    seen = []

    def fake_warm(part):
        seen.append([s.id for s in part])
        if part[0] is shapes[1]:
            raise OSError("worker died\nmore")
        return {"shapes": [{"shape": s.id, "seconds": 2.0, "error": ""} for s in part], "seconds": 9.9, "failed": 0}

    ticks = iter([100.0, 130.5])
    with ThreadPoolExecutor(2) as pool:
        record = warm.warm_in_parallel(shapes, 2, pool=pool, warm=fake_warm, clock=lambda: next(ticks))
    assert sorted(seen) == sorted([[shapes[0].id, shapes[2].id, shapes[4].id], [shapes[1].id, shapes[3].id]])
    assert [r["shape"] for r in record["shapes"]] == [s.id for s in shapes]
    assert [r["error"] for r in record["shapes"]] == ["", "its warm-up process failed: OSError: worker died", "",
                                                      "its warm-up process failed: OSError: worker died", ""]
    assert record["failed"] == 2 and record["workers"] == 2
    assert record["seconds"] == 30.5  # the wall time of all of it, not the sum of its rows


def test_the_default_pool_spawns_processes_that_take_the_shapes_and_the_warm_function():
    """The real path: spawned processes (CUDA cannot fork), shapes and the warm function pickled to them.
    The launch here is the shape's __str__ and the synchronize a no-op, so no GPU is needed."""
    import functools
    import operator

    shapes = [Shape(1, 2, 64, 64, False), Shape(1, 4, 64, 128, True, 2, "bf16"), Shape(2, 8, 128, 64, True)]
    record = warm.warm_in_parallel(shapes, 2, warm=functools.partial(warm.warm_flex, bind=operator.attrgetter("__str__"),
                                                                     synchronize=tuple))
    assert [r["shape"] for r in record["shapes"]] == [s.id for s in shapes]
    assert record["failed"] == 0 and record["workers"] == 2, record


def test_the_warm_up_widens_with_the_gpus_a_run_shares_its_correctness_over():
    from lab.studies.params import RunParams

    assert warm.workers_for(RunParams.from_text(gpus="1"), cpus=16) == 2  # one H100 host: as before
    assert warm.workers_for(RunParams.from_text(gpus="2"), cpus=32) == 4
    assert warm.workers_for(RunParams.from_text(gpus="4"), cpus=64) == 8
    assert warm.workers_for(RunParams.from_text(gpus="4"), cpus=10) == 5  # at most half the cores ...
    assert warm.workers_for(RunParams.from_text(gpus="2"), cpus=2) == 2  # ... and never fewer than WORKERS
    assert warm.workers_for(RunParams.from_text(gpus="all"), cpus=32) == 2  # a count not settled: one GPU's


def test_the_warm_up_processes_share_half_the_cores_for_their_compiles(monkeypatch, tmp_path):
    """Each warm-up process compiles with half the cores over the processes (at least one thread); the
    command sets it for the processes it spawns, unless the environment already says."""
    assert warm.compile_threads(8, cpus=64) == 4 and warm.compile_threads(2, cpus=64) == 16
    assert warm.compile_threads(4, cpus=32) == 4 and warm.compile_threads(5, cpus=10) == 1
    assert warm.compile_threads(2, cpus=2) == 1  # never none
    from lab.measure import records
    from lab.studies.params import RunParams

    rec = records.RunRecord(root=tmp_path)
    rec.write_json("params.json", RunParams.from_text(peers="sdpa_flash").resolved().to_json())  # nothing to warm
    seen = {}
    monkeypatch.setattr(warm, "warm_in_parallel", lambda shapes, workers: seen.update(
        workers=workers, threads=os.environ.get(warm.COMPILE_THREADS_ENV)) or {"shapes": [], "seconds": 0.0,
                                                                              "failed": 0, "workers": 0})
    monkeypatch.setattr(records.RunRecord, "open", staticmethod(lambda run_id: rec))
    monkeypatch.setenv(warm.COMPILE_THREADS_ENV, "")  # recorded, so that what main sets is undone after the test
    monkeypatch.delenv(warm.COMPILE_THREADS_ENV)
    monkeypatch.setattr(warm.os, "cpu_count", lambda: 48)
    warm.main([rec.run_id, "--workers", "6"])
    assert seen == {"workers": 6, "threads": "4"}  # 48 / 2 / 6
    monkeypatch.setenv(warm.COMPILE_THREADS_ENV, "7")
    warm.main([rec.run_id, "--workers", "6"])
    assert seen["threads"] == "7"  # the user's word stands
