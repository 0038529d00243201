"""Replicates side by side on a pool of GPUs (issue 49), on the CPU: a dask cluster of threads stands in
for dask-cuda's one worker a GPU, and the replicate children are the real ones with fake timers. What a
pool must not change: the samples (the seeds are the replicates', not the order they end in)."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from lab.kernels.shape import Shape
from lab.measure import clocks, records
from lab.studies import gpu_pool, replicate_child, replicates
from lab.studies.params import RunParams


def _plan(root, run_id, n=3):
    rec = records.RunRecord(run_id=run_id, root=root)
    rec.write_json("params.json", dict(variants=["wmma"], shapes=[[4, 16, 512, 64, False], [1, 8, 512, 64, True]],
                                       shape_scopes=["ladder", "ladder"], modes=["hot"], cap_s=3.0, rel_ci=0.005,
                                       min_samples=50, profile=False, check="none", peers=[], backends=["flash"],
                                       seed=7, knockouts=False, replicates=n, stop_guard=[0.99, 2.0]))
    rec.write_json("stages.json", {})
    p = RunParams.read(rec)
    jobs = [replicates.Job(Shape(4, 16, 512, 64, False), ["wmma"], False, ["hot"], None, 8, "ladder"),
            replicates.Job(Shape(1, 8, 512, 64, True), ["wmma"], False, ["hot"], None, 9, "ladder")]
    replicates.write_plan(rec, "timing", jobs, {"wmma": {}}, [], p.replicate_rule(), n, p.seed)
    return rec


def _sorted(samples):
    return samples.sort_values(["replicate", "B", "S", "mode", "impl", "sample"]).reset_index(drop=True)


def test_replicates_side_by_side_measure_what_one_after_another_measures(tmp_path):
    one = _plan(tmp_path, "20990104T000000Z-a")  # one after another, in this process (the same fake timer)
    serial, serial_stops, _ = replicates.run(one, "timing", progress=lambda s: None,
                                             spawn=replicate_child.in_process(replicate_child.fake_measure))
    two = _plan(tmp_path, "20990104T000000Z-b")
    lines = []
    with gpu_pool.replicate_pool(gpus=2, fake=True) as executor:
        pooled, pooled_stops, _ = replicates.run(two, "timing", progress=lines.append, fake=True, executor=executor)
    cols = [c for c in serial.columns if c not in ("run_id", "sm_clock_mhz", "power_w", "temp_c")]
    assert len(serial) > 100 and _sorted(serial)[cols].equals(_sorted(pooled)[cols])
    assert len(pooled_stops) == len(serial_stops) == 3 * 2
    runs = two.read_json("replicates.json")["timing"]["runs"]
    assert [r["replicate"] for r in runs] == [0, 1, 2] and all(r["exit_code"] == 0 for r in runs)
    assert all("gpu" in r for r in runs)  # the child names the GPU it measured on
    assert any("side by side" in ln for ln in lines) and any(ln.startswith("  [replicate 3] ") for ln in lines)


def test_a_replicate_that_fails_everywhere_is_recorded_and_raises_after_the_others(tmp_path, monkeypatch):
    rec = _plan(tmp_path, "20990104T000000Z-c")
    real = gpu_pool.spawn_captured
    tries = []

    def second_fails(run_dir, plan, i, fake=False, avoid=()):
        if i == 1:
            tries.append(avoid)
            return {"code": 5, "output": "boom", "seconds": 0.1, "gpu": str(len(tries))}  # a GPU each attempt
        return real(run_dir, plan, i, fake)

    monkeypatch.setattr(gpu_pool, "spawn_captured", second_fails)
    lines = []
    with ThreadPoolExecutor(max_workers=3) as executor:
        with pytest.raises(RuntimeError, match=r"replicate\(s\) 1 of plan timing exited with code\(s\) 5"):
            replicates.run(rec, "timing", progress=lines.append, fake=True, executor=executor)
    log = rec.read_json("replicates.json")["timing"]
    assert [(r["replicate"], r["exit_code"]) for r in log["runs"]] == [(0, 0), (1, 5), (2, 0)]  # the others kept
    assert tries == [(), ("1",)]  # run once more, not on the GPU it failed on; then given up
    assert [(m["replicate"], m["gpu"], m["exit_code"]) for m in log["moved"]] == [(1, "1", 5)]
    assert any("replicate 2 failed on GPU 1 (exit code 5): handed to the pool again" in ln for ln in lines)


def test_a_gpu_lost_mid_run_leaves_its_replicate_to_the_others(tmp_path, monkeypatch):
    """Two stand-in GPUs (threads named for them); GPU 1 fails every replicate it starts. Each failed replicate
    runs again on GPU 0, none is lost, and what GPU 1 half measured is set aside, not merged."""
    import threading

    rec = _plan(tmp_path, "20990104T000000Z-d")
    real = gpu_pool.spawn_captured
    ran = []

    def two_gpus(run_dir, plan, i, fake=False, avoid=()):
        gpu = threading.current_thread().name.rsplit("_", 1)[-1]  # ThreadPoolExecutor names: <prefix>_<n>
        if gpu in avoid:
            return {"code": None, "output": "", "seconds": 0.0, "gpu": gpu, "elsewhere": True}
        ran.append((i, gpu))
        if gpu == "1":
            (replicates.plan_dir(run_dir, plan) / f"r{i}.json").write_text("{}")  # a half-written record
            return {"code": 3, "output": "CUDA error: unspecified launch failure", "seconds": 1.0, "gpu": gpu}
        return {**real(run_dir, plan, i, fake), "gpu": gpu}

    monkeypatch.setattr(gpu_pool, "spawn_captured", two_gpus)
    lines = []
    with ThreadPoolExecutor(max_workers=2) as executor:
        samples, _, _ = replicates.run(rec, "timing", progress=lines.append, fake=True, executor=executor)
    log = rec.read_json("replicates.json")["timing"]
    assert [(r["replicate"], r["exit_code"]) for r in log["runs"]] == [(0, 0), (1, 0), (2, 0)]
    failed_on_1 = {i for i, g in ran if g == "1"}
    assert failed_on_1 and {m["replicate"] for m in log["moved"]} == failed_on_1
    assert all(m["gpu"] == "1" and m["exit_code"] == 3 for m in log["moved"])
    assert sorted(i for i, g in ran if g == "0") == [0, 1, 2]  # every replicate ended on GPU 0
    assert sorted(samples.replicate.unique()) == [0, 1, 2]
    aside = replicates.plan_dir(rec.dir, "timing") / "interrupted"
    assert {f.name.split("-", 1)[1].removesuffix(".gz") for f in aside.iterdir()} == {f"r{i}.json" for i in failed_on_1}


def test_the_report_says_which_replicates_moved():
    from lab.report.sections.method import _moved

    assert _moved({}) == "" and _moved({"moved": []}) == ""
    one = _moved({"moved": [{"replicate": 1, "gpu": "3", "exit_code": 5}]})
    assert one.startswith(" replicate 2 failed on GPU 3 (exit code 5): it ran again on another GPU")
    two = _moved({"moved": [{"replicate": 0, "gpu": "1", "exit_code": 5}, {"replicate": 2, "gpu": "", "exit_code": None}]})
    assert "replicate 1 failed on GPU 1 (exit code 5); replicate 3 failed on GPU ? (exit code None): each ran" in two


@pytest.mark.parametrize("gpus, available, want", [("all", 4, 4), ("all", 0, 1), (2, 4, 2), ("1", 8, 1)])
def test_the_gpu_count_a_run_asks_for(gpus, available, want):
    assert gpu_pool.resolve_count(gpus, available) == want


@pytest.mark.parametrize("gpus, available, needle", [(0, 4, "a positive number"), ("two", 4, "a positive number"),
                                                     (5, 4, "only 4 GPU")])
def test_a_gpu_count_out_of_reach_is_one_line(gpus, available, needle):
    with pytest.raises(ValueError, match=needle):
        gpu_pool.resolve_count(gpus, available)


def test_gpus_of_different_models_or_power_limits_are_refused():
    h100 = {"index": 0, "name": "NVIDIA H100 80GB HBM3", "power_limit_w": 700}
    gpu_pool.check_alike([h100, {**h100, "index": 1}])
    with pytest.raises(ValueError, match="the GPUs differ .*NVIDIA H100 80GB HBM3 at 500 W; NVIDIA H100 80GB HBM3 at 700 W"):
        gpu_pool.check_alike([h100, {**h100, "index": 1, "power_limit_w": 500}])
    with pytest.raises(ValueError, match="H200"):
        gpu_pool.check_alike([h100, {**h100, "name": "NVIDIA H200"}])


def test_one_gpu_is_no_pool(monkeypatch):
    monkeypatch.setattr(gpu_pool, "visible_gpus", lambda: [{"index": 0, "name": "x", "power_limit_w": 700}])
    monkeypatch.delenv(gpu_pool.SCHEDULER_ENV, raising=False)
    with gpu_pool.replicate_pool(gpus="all") as executor:
        assert executor is None


def test_a_process_names_the_gpu_its_device_list_starts_with(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,0,1,2")  # dask-cuda's rotation for its fourth worker
    assert clocks.gpu_identity()["gpu_index"] == 3


def test_replicates_that_end_together_are_merged_once(tmp_path, monkeypatch):
    """An executor whose replicates have all ended by the time the stage looks (four GPUs ending together):
    one merge for the three, which holds every sample; the two recorded first carry no merge seconds."""
    from concurrent.futures import Future

    class Ended:  # runs each replicate at submit: every future is done when the stage waits
        def submit(self, fn, *args):
            future = Future()
            future.set_result(fn(*args))
            return future

    rec = _plan(tmp_path, "20990104T000000Z-m")
    real, merges = replicates.merge_into, []
    monkeypatch.setattr(replicates, "merge_into", lambda *a, **k: merges.append(1) or real(*a, **k))
    samples, stops, _ = replicates.run(rec, "timing", progress=lambda s: None, fake=True, executor=Ended())
    assert len(merges) == 1 and sorted(samples["replicate"].unique()) == [0, 1, 2] and len(stops) == 3 * 2
    runs = rec.read_json("replicates.json")["timing"]["runs"]
    assert [r["replicate"] for r in runs] == [0, 1, 2] and sorted(r["merge_s"] for r in runs)[:2] == [0.0, 0.0]


def test_the_timing_and_the_factorial_share_one_pool_opened_when_first_asked_for():
    """SharedPool opens its pool at the first executor() (a stage that measures nothing opens none), hands the
    same executor to every later plan, and closes it once, on exit."""
    import contextlib

    events = []

    @contextlib.contextmanager
    def opener(gpus):
        events.append(("open", gpus))
        yield f"executor of {gpus}"
        events.append("close")

    with gpu_pool.SharedPool(4, opener) as pool:
        assert events == []
        assert pool.executor() == pool.executor() == "executor of 4"
        assert events == [("open", 4)]
    assert events == [("open", 4), "close"]
    with gpu_pool.SharedPool(4, opener):
        pass
    assert events == [("open", 4), "close"]  # never asked for: never opened
