"""The correctness grid and the profile's shapes shared over a run's GPUs (issue 49), on the CPU: the children
are Python processes that stand in for a GPU's checks (they write what the real child writes), and the
profile's Nsight Compute calls are stand-ins that record the GPU they were given."""

import json
import os
import sys
import threading
import time

import pytest

from lab.kernels.shape import Shape
from lab.measure import check as checks
from lab.measure import records
from lab.studies import correctness_child, gpu_pool, gpu_share, profiling

H100 = {"name": "NVIDIA H100 80GB HBM3", "power_limit_w": 700}


def test_shares_deal_the_items_round_and_merge_puts_them_back_in_order():
    items = list(range(11))
    assert gpu_share.shares(items, 3) == [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8]]
    for n in (1, 2, 3, 4, 11, 12):
        assert gpu_share.merge(gpu_share.shares(items, n)) == items
    assert gpu_share.merge([[], []]) == []
    with pytest.raises(ValueError, match="parts=0"):
        gpu_share.shares(items, 0)


def test_balanced_deals_the_costliest_items_first_to_the_least_loaded_part():
    # by hand: a (10) to part 0, e (10) to part 1, then the ones in order, each to the lighter part, part 0 on a
    # tie: b 0, c 1, d 0, f 1, g 0, h 1; each part keeps the given order
    assert gpu_share.balanced(list("abcdefgh"), [10, 1, 1, 1, 10, 1, 1, 1], 2) == [list("abdg"), list("cefh")]
    assert gpu_share.balanced(list("abcde"), [1, 1, 1, 9, 1], 2) == [["d"], list("abce")]
    # round robin (shares) would put 9 and 8 together: 17 against 3; the balanced parts 9 + 1 and 8 + 1 + 1
    items, costs = list(range(6)), [9, 1, 8, 1, 1, 0]
    assert max(sum(costs[i] for i in p) for p in gpu_share.shares(items, 2)) == 18
    parts = gpu_share.balanced(items, costs, 2)
    assert sorted(i for p in parts for i in p) == items and max(sum(costs[i] for i in p) for p in parts) == 10
    assert gpu_share.balanced([], [], 3) == [[], [], []]
    with pytest.raises(ValueError, match="2 costs for 3 items"):
        gpu_share.balanced([1, 2, 3], [1, 2], 2)
    with pytest.raises(ValueError, match="parts=0"):
        gpu_share.balanced([1], [1], 0)


def test_gpu_ids_one_a_gpu_where_a_run_uses_several(monkeypatch):
    two = [dict(H100, index=0), dict(H100, index=1)]
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert gpu_pool.gpu_ids(2, two) == ["0", "1"] and gpu_pool.gpu_ids("all", two) == ["0", "1"]
    assert gpu_pool.gpu_ids(1, two) == [] and gpu_pool.gpu_ids("all", two[:1]) == []
    assert gpu_pool.gpu_ids("all", []) == []  # no GPU found: the stage's own process
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert gpu_pool.gpu_ids(2, two) == ["3", "5"]  # the entries the run was given, not NVML's numbers
    with pytest.raises(ValueError, match="only 2 GPU"):
        gpu_pool.gpu_ids(3, two)
    with pytest.raises(ValueError, match="the GPUs differ"):
        gpu_pool.gpu_ids(2, [two[0], dict(two[1], power_limit_w=350)])


# A stand-in child: the real child's output file for the cases it is given on its command line (two kernels
# a case, the GPU it saw in each result's `error`), a tick line a case; `fail` exits 3 without results.
CHILD = r"""
import json, os, sys
ids, out, fail = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
gpu = os.environ["CUDA_VISIBLE_DEVICES"]
print("starting on", gpu, flush=True)
if fail:
    sys.exit(3)
res = []
for cid in ids:
    for v in ("a", "b"):
        res.append(dict(variant=v, case=cid, B=1, H=1, S=1, D=64, causal=False, scale=None, max_abs_err=0.0,
                        sdpa_max_abs_err=0.0, tolerance=1.0, finite=True, inputs_unchanged=True, deterministic=True,
                        passed=True, error=gpu))
    print("case done: " + cid, flush=True)
json.dump({"cases": ids, "results": res}, open(out, "w"))
"""


def _stand_in(cases, parts, fail=()):
    def command(run_dir, k, n, out):
        assert n == parts
        ids = [c.id for c in gpu_share.shares(cases, n)[k]]
        return [sys.executable, "-c", CHILD, json.dumps(ids), str(out), "1" if k in fail else "0"]
    return command


def test_every_case_is_checked_once_on_its_gpu_and_the_results_keep_the_grids_order(tmp_path):
    cases = checks.small_grid()
    rec = records.RunRecord(run_id="20990105T000000Z-a", root=tmp_path)
    lines, ticks = [], []
    out = gpu_share.check_shared(rec, cases, ["4", "7"], lambda part: pytest.fail("no part fails"), lines.append,
                                 ticks.append, command=_stand_in(cases, 2))
    assert [(r.case, r.variant) for r in out] == [(c.id, v) for c in cases for v in ("a", "b")]
    assert [r.error for r in out[::2]] == [("4", "7")[i % 2] for i in range(len(cases))]  # case i on GPU i % 2
    assert sorted(ticks) == sorted(c.id for c in cases)
    assert "  [GPU 4] starting on 4" in lines and "  [GPU 7] starting on 7" in lines


def test_a_part_whose_child_fails_is_checked_here(tmp_path):
    cases = checks.small_grid()
    rec = records.RunRecord(run_id="20990105T000000Z-b", root=tmp_path)
    asked, lines = [], []

    def check_here(part):
        asked.append([c.id for c in part])
        return [checks.CaseResult(v, c.id, 1, 1, 1, 64, False, None, 0.0, 0.0, 1.0, True, True, True, True, "here")
                for c in part for v in ("a", "b")]

    out = gpu_share.check_shared(rec, cases, ["0", "1", "2"], check_here, lines.append,
                                 command=_stand_in(cases, 3, fail={1}))
    assert asked == [[c.id for c in cases[1::3]]]
    assert [(r.case, r.variant) for r in out] == [(c.id, v) for c in cases for v in ("a", "b")]
    assert {r.error for r in out[2::6]} == {"here"} and {r.error for r in out[::6]} == {"0"}
    assert any("GPU 1 exited with code 3" in ln for ln in lines)


def test_a_child_that_checked_other_cases_is_not_trusted(tmp_path):
    cases = checks.small_grid()
    rec = records.RunRecord(run_id="20990105T000000Z-c", root=tmp_path)
    wrong = _stand_in(cases[::-1], 2)  # each child checks the cases of the reversed grid
    asked = []
    gpu_share.check_shared(rec, cases, ["0", "1"], lambda part: asked.append(part) or [
        checks.CaseResult(v, c.id, 1, 1, 1, 64, False, None, 0.0, 0.0, 1.0, True, True, True, True)
        for c in part for v in ("a", "b")], lambda s: None, command=wrong)
    assert len(asked) == 2


def test_the_child_refuses_a_part_outside_its_parts(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        correctness_child.main([str(tmp_path), "--part", "2", "--parts", "2", "--out", str(tmp_path / "x.json")])
    assert exc.value.code == 2 and "--part 2" in capsys.readouterr().err


def test_profile_shapes_go_to_the_gpus_side_by_side_and_the_table_keeps_their_order(monkeypatch, tmp_path):
    from lab.measure import profile

    seen, active, peak, lock = [], [0], [0], threading.Lock()

    def variants(names, shape, causal, out, gpu=None):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            seen.append((shape.S, gpu))
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return [profile._result(n, Shape(*shape.dims, causal, shape.H_kv, shape.dtype), ok=True) for n in names]

    monkeypatch.setattr(profile, "profile_variants", variants)
    monkeypatch.setattr(profile, "profile_peers", lambda names, shape, causal, out, gpu=None: [])
    rec = records.RunRecord(run_id="20990105T000000Z-d", root=tmp_path)
    shapes = [Shape(1, 2, s, 64, False) for s in (128, 256, 384, 512, 640)]
    ticks = []
    profiling.profile_run(rec, ["wmma"], shapes, [], progress=lambda *_: None, tick=ticks.append, gpus=["0", "1"])
    import pandas as pd

    table = pd.read_csv(rec.path("profile.csv"))
    assert list(table.S) == [128, 256, 384, 512, 640] and len(ticks) == 5
    assert {g for _, g in seen} == {"0", "1"} and peak[0] == 2
    assert rec.read_json("profile_status.json")["ok"] is True
    seen.clear()
    profiling.profile_run(rec, ["wmma"], shapes[:2], [], progress=lambda *_: None, gpus=["0"])  # one GPU: as before
    assert seen == [(128, None), (256, None)]


def test_a_run_records_the_gpus_it_will_use(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv(gpu_pool.SCHEDULER_ENV, raising=False)
    two = [dict(H100, index=0), dict(H100, index=1)]
    lines = []
    assert gpu_pool.for_run("all", lines.append, two, has_dask_cuda=True) == "2"
    assert gpu_pool.for_run("2", lines.append, two, has_dask_cuda=True) == "2"
    assert gpu_pool.for_run("all", lines.append, two[:1], has_dask_cuda=False) == "1"
    assert gpu_pool.for_run("1", lines.append, two, has_dask_cuda=False) == "1" and lines == []
    # the default falls back to one GPU and says why; a number asked for by name is refused
    assert gpu_pool.for_run("all", lines.append, two, has_dask_cuda=False) == "1"
    assert len(lines) == 1 and "dask-cuda is not installed" in lines[0]
    with pytest.raises(ValueError, match="GPUS=2: a run on several GPUs needs dask-cuda"):
        gpu_pool.for_run("2", lines.append, two, has_dask_cuda=False)
    mixed = [two[0], dict(two[1], name="NVIDIA RTX A2000")]
    assert gpu_pool.for_run("all", lines.append, mixed, has_dask_cuda=True) == "1"
    assert "the GPUs differ" in lines[-1]
    with pytest.raises(ValueError, match="the GPUs differ"):
        gpu_pool.for_run("2", lines.append, mixed, has_dask_cuda=True)
    monkeypatch.setenv(gpu_pool.SCHEDULER_ENV, "tcp://10.0.0.1:8786")  # a cluster: taken as given
    assert gpu_pool.for_run("4", lines.append, [], has_dask_cuda=False) == "4"


def test_ncu_of_each_gpu_runs_with_its_own_lock_folder(monkeypatch, tmp_path):
    """Nsight Compute's lock is $TMPDIR/nsight-compute-lock: each GPU its own, one GPU's always the same."""
    from lab.measure import ncu_process

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    env = [sys.executable, "-c", "import os; print(os.environ['TMPDIR'], os.environ.get('CUDA_VISIBLE_DEVICES'))"]
    seen = {gpu: ncu_process.run_in_group(env, 30, gpu)[1].split() for gpu in ("0", "1", "GPU-1a/2b")}
    assert seen["0"] == [str(tmp_path / "lab-ncu-gpu-0"), "0"] and seen["1"] == [str(tmp_path / "lab-ncu-gpu-1"), "1"]
    assert seen["GPU-1a/2b"] == [str(tmp_path / "lab-ncu-gpu-GPU-1a_2b"), "GPU-1a/2b"]  # a UUID entry: one folder
    assert all(os.path.isdir(d) for d, _ in seen.values())
    assert ncu_process.run_in_group(env, 30, "0")[1].split()[0] == seen["0"][0]
    monkeypatch.setenv("TMPDIR", "/somewhere")
    assert ncu_process.run_in_group(env, 30, None)[1].split()[0] == "/somewhere"  # no GPU named: the process's own


@pytest.mark.parametrize("gpus", [["3", "5"], []])
def test_the_profile_stage_runs_its_parts_side_by_side_on_several_gpus_and_in_turn_on_one(monkeypatch, tmp_path, gpus):
    """With several GPUs the shapes, the ncu cross-check (on the last GPU) and the SASS mix overlap; with one,
    they run one after another as before. Each part's seconds are recorded either way."""
    from types import SimpleNamespace

    from lab.studies import stages
    from lab.studies.params import RunParams

    rec = records.RunRecord(run_id="20990105T000000Z-e", root=tmp_path)
    rec.write_json("params.json", RunParams.from_text(shapes="canonical", variants="tma").resolved().to_json())
    rec.write_json("stages.json", {})
    spans, lock = {}, threading.Lock()

    def part(name, seconds, result=None):
        def run(*args, **kwargs):
            t0 = time.perf_counter()
            time.sleep(seconds)
            with lock:
                spans[name] = (t0, time.perf_counter(), args, kwargs)
            return result
        return run

    monkeypatch.setattr(gpu_pool, "gpu_ids", lambda n: list(gpus))
    monkeypatch.setattr(stages, "loaded_kernels", lambda rec: {"tma": object()})
    monkeypatch.setattr(stages, "_built", lambda rec: {"tma": None})
    monkeypatch.setattr(stages, "run_peers", lambda rec: [SimpleNamespace(name="sdpa_flash")])
    monkeypatch.setattr(stages, "profile_run", part("shapes", 0.3))
    monkeypatch.setattr(stages, "ncu_crosscheck", part("xval", 0.2, {"rows": []}))
    monkeypatch.setattr(stages, "sass_mix_of_run", part("sass", 0.2, {"rows": []}))
    from lab.studies import ahead

    background = SimpleNamespace(wait=lambda: spans.setdefault("ahead waited", time.perf_counter()) and 0)
    monkeypatch.setattr(ahead, "start", lambda r: spans.setdefault("ahead started", time.perf_counter())
                        and background)
    stages.stage_profile(rec, progress=lambda *_: None)
    (s0, s1, _, shape_kw), (x0, x1, x_args, _), (m0, m1, _, _) = spans["shapes"], spans["xval"], spans["sass"]
    assert shape_kw["gpus"] == gpus
    assert x_args[-1] == (gpus[-1] if gpus else None)  # the cross-check's GPU: the last, or the process's own
    overlap = x0 < s1 and m0 < s1  # both started before the shapes were done
    assert overlap == bool(gpus)
    if not gpus:
        assert s1 <= x0 and x1 <= m0  # one after another, in the stage's order
    parts = rec.read_json("stages.json")["parts"]["profile"]
    assert set(parts) == {"ncu_xval_s", "sass_mix_s", "derived_ahead_s"}
    assert rec.has("ncu_xval.json") and rec.has("sass_mix.json")
    # the report's statistics computed beside the whole profile: started before it, waited for after it
    assert spans["ahead started"] <= min(s0, x0, m0) and spans["ahead waited"] >= max(s1, x1, m1)


def test_a_shapes_variants_and_peers_are_tasks_of_their_own_on_several_gpus(monkeypatch, tmp_path):
    """On several GPUs a shape's variants and its peers go to the GPUs as two tasks (the variants' first),
    so that 3 shapes keep 4 GPUs busy; profile.csv keeps the shapes' order, each shape's variants' rows
    before its peers'; a shape is ticked once, when both its parts are done. On one GPU: one task a shape."""
    from lab.measure import profile

    calls, lock = [], threading.Lock()

    def together(kind):
        def run(names, shape, causal, out, gpu=None):
            with lock:
                calls.append((kind, shape.S, gpu))
            time.sleep(0.05 if kind == "variants" else 0.01)
            return [profile._result(n, Shape(*shape.dims, causal, shape.H_kv, shape.dtype), ok=True) for n in names]
        return run

    monkeypatch.setattr(profile, "profile_variants", together("variants"))
    monkeypatch.setattr(profile, "profile_peers", together("peers"))
    rec = records.RunRecord(run_id="20990105T000000Z-f", root=tmp_path)
    shapes = [Shape(1, 2, s, 64, False) for s in (128, 256, 384)]
    ticks = []
    profiling.profile_run(rec, ["wmma", "tma"], shapes, ["sdpa_flash"], progress=lambda *_: None, tick=ticks.append,
                          gpus=["0", "1", "2", "3"])
    import pandas as pd

    table = pd.read_csv(rec.path("profile.csv"))
    assert list(zip(table.S, table.impl)) == [(s, n) for s in (128, 256, 384) for n in ("wmma", "tma", "sdpa_flash")]
    assert sorted(ticks) == sorted(str(s) for s in shapes) and len(ticks) == 3
    assert [k for k, _, _ in calls[:3]] == ["variants"] * 3  # the longer parts start first
    assert {g for _, _, g in calls} == {"0", "1", "2", "3"}  # the fourth GPU takes a peers part
    calls.clear()
    profiling.profile_run(rec, ["wmma"], shapes[:2], ["sdpa_flash"], progress=lambda *_: None, gpus=["0"])
    assert calls == [("variants", 128, None), ("peers", 128, None), ("variants", 256, None), ("peers", 256, None)]


@pytest.mark.parametrize("gpus", [["3", "5"], []])
def test_the_correctness_stage_starts_the_peers_check_before_its_grid_and_collects_it_after(monkeypatch, tmp_path,
                                                                                           gpus):
    """The peers' check (compiles, mostly) runs beside the grid: started first, on the run's GPUs or the stage's
    own, collected once the grid is done; the stage returns the grid's results, then the peers'."""
    from lab.studies import peer_check, stages
    from lab.studies.params import RunParams

    rec = records.RunRecord(run_id="20990105T000000Z-g", root=tmp_path)
    rec.write_json("params.json", RunParams.from_text(shapes="canonical", variants="tma", check="quick")
                   .resolved().to_json())
    rec.write_json("stages.json", {})
    rec.write_json("excluded.json", {})
    events = []
    result = checks.CaseResult("tma", "c", 1, 1, 1, 64, False, None, 0.0, 0.0, 1.0, True, True, True, True)
    monkeypatch.setattr(gpu_pool, "gpu_ids", lambda n: list(gpus))
    monkeypatch.setattr(stages, "_built", lambda rec: {"tma": None})
    monkeypatch.setattr(stages, "loaded_kernels", lambda rec: {"tma": object()})
    monkeypatch.setattr(peer_check, "start", lambda rec, g, progress: events.append(("start", list(g))) or "pending")
    monkeypatch.setattr(peer_check, "finish", lambda rec, pending, progress: events.append(("finish", pending))
                        or ["peer result"])

    def grid(*args, **kwargs):
        events.append(("grid", gpus))
        time.sleep(0.05)
        return [result]

    monkeypatch.setattr(gpu_share, "check_shared", grid)
    monkeypatch.setattr(checks, "run_grid", lambda kernels, part, progress=None, tick=None: iter(grid()))
    out = stages.stage_correctness(rec, progress=lambda *_: None)
    assert events == [("start", gpus), ("grid", gpus), ("finish", "pending")]
    assert out == [result, "peer result"]
    parts = rec.read_json("stages.json")["parts"]["correctness"]
    assert set(parts) == {"grid_s", "peers_s"} and parts["peers_s"] >= parts["grid_s"] >= 0.05
