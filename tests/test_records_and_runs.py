"""CPU tests: shape sets, run records (never overwritten, status), and the regression gate on
synthetic runs with known answers."""

import numpy as np
import pandas as pd
import pytest

from lab.measure import records, stats
from lab.kernels.shape import Shape
from lab.studies import compare, measure_shape, profiling, shapes

from tests.ladder import SM90_END as END  # the sm_90a branch's last step


def test_shape_sets():
    canonical = shapes.shape_set("canonical")
    assert len(canonical) == 7 and Shape(32, 8, 512, 64, False) in canonical
    assert {(s.B, s.H) for s in canonical} == {(1, 8), (4, 16), (8, 16), (32, 8)}
    assert shapes.shape_set("large") == [Shape(4, 16, 4096, D, c) for D in (64, 128) for c in (False, True)]
    sweep = shapes.shape_set("sweep")
    assert {s.S for s in sweep} == {256 << i for i in range(7)} and {s.D for s in sweep} == {64, 128}
    assert all(s.B * s.S == shapes.SWEEP_TOKENS and not s.causal for s in sweep)
    assert shapes.shape_set("long") == [Shape(B, 16, S, 128, c) for (B, S) in ((2, 8192), (1, 16384), (16, 1024))
                                     for c in (False, True)]
    assert len(shapes.shapes_from("canonical,large")) == 11
    assert shapes.scopes_from("canonical,large") == ["ladder"] * 11


def test_scopes_take_the_widest_set_a_shape_is_in():
    scoped = shapes.scoped_shapes("canonical,large,long,sweep")
    # (4,16,4096,64) is both large (ladder) and sweep (tails-hot); (1,16,16384,128) both long and sweep
    assert scoped[Shape(4, 16, 4096, 64, False)] == "ladder"
    assert scoped[Shape(1, 16, 16384, 128, False)] == "tails"
    assert scoped[Shape(64, 16, 256, 64, False)] == "tails-hot"
    assert len(scoped) == 26 and shapes.shapes_from("canonical,large,long,sweep") == list(scoped)
    assert shapes.scoped_shapes("4,16,512,64") == {Shape(4, 16, 512, 64, False): "ladder"}
    # a run recorded before scopes: every shape is measured as "ladder"
    assert set(shapes.shape_scopes({"shapes": [[4, 16, 512, 64, False]]}).values()) == {"ladder"}


def test_branch_ends_are_the_last_step_of_each_arch():
    from lab.kernels.manifest import branch_ends, headline_end, names

    assert branch_ends(names()) == ["portable_model_inputs", END]
    # the A/A twin and the factorial go to the arch-specific end where a run has it
    assert headline_end(names()) == END
    assert headline_end(names()[:27]) == "balanced_causal"
    assert headline_end(names()[:18]) == "ftz_exp2"
    assert headline_end(names()[:8] + ["small_grid_tiles"]) == "small_grid_tiles"
    assert branch_ends(["baseline", "wmma", "wgmma"]) == ["wmma", "wgmma"]
    assert shapes.shapes_from("4,16,512,64,causal;1,1,8,128") == [Shape(4, 16, 512, 64, True),
                                                              Shape(1, 1, 8, 128, False)]
    with pytest.raises(ValueError, match="expected B,H,S,D"):
        shapes.shapes_from("4,16,512")
    with pytest.raises(ValueError, match="causal \\(the word\\)"):  # a "1" must not pass as non-causal
        shapes.shapes_from("4,16,512,64,1")


def test_input_sets_rotate_only_when_inputs_fit_in_l2():
    l2 = 50 * 2**20
    assert measure_shape.input_sets(Shape(4, 16, 4096, 128, False), l2) == 1
    small = Shape(1, 8, 512, 64, False)  # 2 MiB of Q, K, V, O
    assert measure_shape.input_sets(small, l2) == 32
    assert measure_shape.input_sets(Shape(4, 16, 512, 64, False), l2) == 7  # 16 MiB a set: ceil(2 x L2 / 16 MiB)


def test_run_ids_never_collide(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "RUNS_DIR", tmp_path)
    a = records.RunRecord(root=tmp_path)
    b = records.RunRecord(run_id=None, root=tmp_path)
    assert a.run_id != b.run_id and a.dir.is_dir() and b.dir.is_dir()
    with pytest.raises(FileExistsError):
        records.RunRecord(run_id=a.run_id, root=tmp_path)


def test_status_running_until_finished(tmp_path):
    rec = records.RunRecord(root=tmp_path)
    assert rec.status["state"] == "running"
    assert records.latest_run(tmp_path) is None, "a run still running is not complete"
    rec.finish("complete", stages={"timing_s": 1.0})
    assert rec.status["state"] == "complete" and rec.status["stages"] == {"timing_s": 1.0}
    assert records.latest_run(tmp_path) == rec.run_id


def test_run_id_without_git_uses_env(monkeypatch):
    monkeypatch.setattr(records, "git", lambda *a: "")
    monkeypatch.setenv("LAB_GIT_SHA", "abcdef0123456789")
    monkeypatch.setenv("LAB_GIT_DIRTY", "0")
    assert records.new_run_id().endswith("-abcdef0")
    assert records.git_dirty() is False


def test_env_sha_wins_over_a_stale_git(monkeypatch):
    # A lent GPU machine's copy of the tree can carry an old .git: the commit named by the
    # caller is the one measured.
    monkeypatch.setattr(records, "git", lambda *a: "fc41a886298dfe77" if a[0] == "rev-parse" else " M x")
    monkeypatch.setenv("LAB_GIT_SHA", "063a5250000")
    monkeypatch.setenv("LAB_GIT_DIRTY", "0")
    assert records.git_sha() == "063a5250000" and records.git_dirty() is False
    monkeypatch.delenv("LAB_GIT_SHA")
    assert records.git_sha() == "fc41a886298dfe77" and records.git_dirty() is True


def _fake_run(root, run_id, medians: dict, gpu="NVIDIA H200", failed=(), seed=0, shifts=(1.0,)):
    """A complete run whose samples are lognormal around the given medians; 200 samples split among
    len(shifts) replicates, replicate r's median multiplied by shifts[r]."""
    rng = np.random.default_rng(seed)
    rec = records.RunRecord(run_id=run_id, root=root)
    rec.write_json("env.json", {"gpu": gpu})
    rec.write_json("correctness.json", [{"variant": v, "case": "c", "passed": v not in failed} for v in medians])
    rows = []
    for impl, med in medians.items():
        rep = np.arange(200) % len(shifts)
        lat = med * np.asarray(shifts)[rep] * rng.lognormal(0, 0.01, 200)
        for i, x in enumerate(lat):
            rows.append(dict(run_id=run_id, impl=impl, B=1, H=8, S=512, D=64, causal=False, dtype="float16",
                             mode="hot", sample=i, latency_us=x, sm_clock_mhz=1980.0, throttled=False,
                             replicate=int(rep[i])))
    rec.write_table("samples.parquet", pd.DataFrame(rows, columns=records.SAMPLE_COLUMNS))
    rec.finish("complete")
    return rec


@pytest.fixture
def runs_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "RUNS_DIR", tmp_path)
    return tmp_path


def test_compare_passes_when_nothing_changed(runs_dir):
    _fake_run(runs_dir, "20260101T000000Z-a", {"wmma": 20.0, "sdpa_flash": 10.0}, seed=1)
    _fake_run(runs_dir, "20260102T000000Z-b", {"wmma": 20.0, "sdpa_flash": 10.0}, seed=2)
    assert compare.compare("20260102T000000Z-b", progress=lambda s: None) == 0


def test_compare_flags_a_significant_regression(runs_dir):
    _fake_run(runs_dir, "20260101T000000Z-a", {"wmma": 20.0}, seed=1)
    _fake_run(runs_dir, "20260102T000000Z-b", {"wmma": 21.0}, seed=2)  # 5% slower
    lines = []
    assert compare.compare("20260102T000000Z-b", progress=lines.append) == 1
    assert any("slower" in line for line in lines)


def test_compare_of_runs_with_replicates_counts_their_spread(runs_dir):
    """Two runs of three replicates whose processes scatter by about 3 %, B's median 4 % above A's:
    within what three replicates each can tell apart, so not a regression. The same samples
    without their replicate column (as if from one process each) make it one."""
    a = _fake_run(runs_dir, "20260101T000000Z-a", {"wmma": 20.0}, seed=1, shifts=(0.97, 1.0, 1.03))
    b = _fake_run(runs_dir, "20260102T000000Z-b", {"wmma": 20.6}, seed=2, shifts=(0.99, 1.03, 1.01))
    lines = []
    assert compare.compare(b.run_id, a.run_id, progress=lines.append) == 0
    assert "within noise" in lines[1]
    for rec in (a, b):
        rec.write_table("samples.parquet", rec.read_table("samples.parquet").drop(columns="replicate"))
    lines = []
    assert compare.compare(b.run_id, a.run_id, progress=lines.append) == 1
    assert "slower" in lines[1]


def test_compare_ignores_a_slower_peer_and_a_small_change(runs_dir):
    _fake_run(runs_dir, "20260101T000000Z-a", {"wmma": 20.0, "sdpa_flash": 10.0}, seed=1)
    _fake_run(runs_dir, "20260102T000000Z-b", {"wmma": 20.2, "sdpa_flash": 12.0}, seed=2)  # wmma 1% slower
    assert compare.compare("20260102T000000Z-b", progress=lambda s: None) == 0


def test_compare_ignores_a_slower_non_sdpa_peer(runs_dir):
    _fake_run(runs_dir, "20260101T000000Z-a", {"wmma": 20.0, "flex_attention": 10.0}, seed=1)
    _fake_run(runs_dir, "20260102T000000Z-b", {"wmma": 20.0, "flex_attention": 12.0}, seed=2)
    assert compare.compare("20260102T000000Z-b", progress=lambda s: None) == 0


def test_compare_fails_on_a_correctness_failure(runs_dir):
    _fake_run(runs_dir, "20260101T000000Z-a", {"wmma": 20.0}, seed=1)
    _fake_run(runs_dir, "20260102T000000Z-b", {"wmma": 20.0}, failed=("wmma",), seed=2)
    assert compare.compare("20260102T000000Z-b", progress=lambda s: None) == 1


def test_best_base_is_the_fastest_earlier_run_on_the_same_gpu(runs_dir):
    _fake_run(runs_dir, "20260101T000000Z-a", {"wmma": 18.0}, seed=1)
    _fake_run(runs_dir, "20260102T000000Z-b", {"wmma": 25.0}, seed=2)
    _fake_run(runs_dir, "20260103T000000Z-c", {"wmma": 10.0}, gpu="NVIDIA H100 80GB HBM3", seed=3)
    _fake_run(runs_dir, "20260104T000000Z-d", {"wmma": 20.0}, seed=4)
    assert compare.best_base("20260104T000000Z-d") == "20260101T000000Z-a"


def test_pipeline_resume_runs_only_the_stages_a_run_lacks(tmp_path):
    from lab import pipeline

    rec = records.RunRecord(root=tmp_path)
    assert pipeline.remaining(rec) == pipeline.MEASURE[1:]
    assert pipeline.remaining(rec, stop_after="timing") == ["01_build.ipynb", "02_correctness.ipynb", "03_timing.ipynb"]
    rec.write_json("stages.json", {"build_s": 1.0, "correctness_s": 2.0, "timing_s": 3.0})
    assert pipeline.remaining(rec) == ["04_profile.ipynb"]
    assert pipeline.remaining(rec, stop_after="timing") == []
    rec.write_json("stages.json", {"build_s": 1.0, "correctness_s": 2.0, "timing_s": 3.0, "profile_s": 4.0})
    assert pipeline.remaining(rec) == []


def test_a_run_measured_without_its_report_is_closed_once_every_stage_ran(tmp_path):
    """--no-report: the report notebook, which closes a run, does not run; the pipeline closes a run whose
    measuring stages all ran (state complete, total_s their sum) and leaves one with a stage to go open."""
    from lab import pipeline

    rec = records.RunRecord(root=tmp_path)
    rec.write_json("params.json", {"variants": ["wmma"], "shapes": [[1, 8, 512, 64, False]], "knockouts": False})
    rec.write_json("stages.json", {"build_s": 1.0, "correctness_s": 2.0, "timing_s": 3.0})
    assert rec.status["state"] == "running" and not pipeline.close_if_measured(rec)
    assert records.RunRecord.open(rec.run_id, tmp_path).status["state"] == "running"
    rec.write_json("stages.json", {"build_s": 1.0, "correctness_s": 2.0, "timing_s": 3.0, "profile_s": 4.5,
                                   "parts": {"profile": {"ncu_xval_s": 1.0}}})
    assert pipeline.close_if_measured(rec)
    again = records.RunRecord.open(rec.run_id, tmp_path)
    assert again.status["state"] == "complete" and again.read_json("stages.json")["total_s"] == 10.5
    assert not pipeline.close_if_measured(again)  # closed once


def test_pipeline_resume_reruns_the_timing_notebook_for_a_factorial_it_lacks(tmp_path):
    """Stopped after the timing but inside the factorial (which the timing notebook runs): 03 again."""
    from lab import pipeline

    rec = records.RunRecord(root=tmp_path)
    rec.write_json("params.json", {"variants": ["wmma"], "shapes": [[1, 8, 512, 64, False]], "knockouts": True})
    rec.write_json("stages.json", {"build_s": 1.0, "correctness_s": 2.0, "timing_s": 3.0})
    assert pipeline.remaining(rec) == ["03_timing.ipynb", "04_profile.ipynb"]
    rec.write_json("stages.json", {"build_s": 1.0, "correctness_s": 2.0, "timing_s": 3.0, "factorial_s": 1.0})
    assert pipeline.remaining(rec) == ["04_profile.ipynb"]
    rec.write_json("params.json", {"variants": ["wmma"], "shapes": [[1, 8, 512, 64, False]], "knockouts": False})
    rec.write_json("stages.json", {"build_s": 1.0, "correctness_s": 2.0, "timing_s": 3.0})
    assert pipeline.remaining(rec) == ["04_profile.ipynb"]


def test_a_resume_records_which_part_of_the_timing_stage_it_still_runs(tmp_path):
    """resumes.json names what a resume runs: the timing stage's decode set and factorial run after its own
    timing, in the same notebook, so a run stopped between them resumes with those parts only."""
    from lab import pipeline
    from lab.studies import stages

    assert stages.left_to_run("profile", {}, knockouts=True, decode=True) == "profile"
    assert stages.left_to_run("timing", {}, knockouts=True, decode=True) == "timing with its decode set and factorial"
    assert stages.left_to_run("timing", {}, knockouts=False, decode=False) == "timing"
    assert stages.left_to_run("timing", {"timing_s": 3.0}, knockouts=True, decode=True) == (
        "timing's decode set and factorial")
    assert stages.left_to_run("timing", {"timing_s": 3.0, "decode_s": 1.0}, knockouts=True, decode=True) == (
        "timing's factorial")
    assert stages.left_to_run("timing", {"decode_s": 1.0}, knockouts=False, decode=True) == "timing"
    rec = records.RunRecord(root=tmp_path)
    rec.write_json("params.json", {"variants": ["wmma"], "shapes": [[1, 8, 512, 64, False]], "knockouts": True})
    rec.write_json("stages.json", {"build_s": 1.0, "correctness_s": 2.0, "timing_s": 3.0})
    assert pipeline.stages_left(rec, pipeline.remaining(rec)) == ["timing's factorial", "profile"]


def test_profiled_shapes_all_or_one_per_s_and_d():
    ladder = shapes.shapes_from("canonical,large")
    assert profiling.select_profile_shapes(ladder, "all") == ladder
    distinct = profiling.select_profile_shapes(ladder, "distinct")
    assert sorted((s.S, s.D) for s in distinct) == [(512, 64), (4096, 64), (4096, 128)]
    assert all(not s.causal for s in distinct)
    with pytest.raises(ValueError, match="profile_shapes"):
        profiling.select_profile_shapes(ladder, "some")


def test_a_step_judged_at_a_shape_not_profiled_is_profiled_there_with_its_parent():
    from lab.kernels.manifest import Variant

    def step(name, parent, judged_at=""):
        return Variant(index=0, name=name, file=f"{name}.cu", parent=parent, title="", change="", hypothesis="",
                       metric="", direction="up", speedup=(1.0, 1.1), arch="sm_90a", judged_at=judged_at)

    ladder = shapes.shapes_from("canonical,large")
    profiled = profiling.select_profile_shapes(ladder, "distinct")
    causal_64, causal_128 = Shape(4, 16, 4096, 64, True), Shape(4, 16, 4096, 128, True)
    assert causal_64 in ladder and causal_64 not in profiled
    steps = [step("a", ""), step("b", "a", "4,16,4096,64,causal"), step("c", "b", "4,16,4096,64,causal"),
             step("d", "c", "4,16,4096,64"),  # profiled already: nothing more
             step("e", "d", "4,16,4096,128,causal"),  # not built: nothing
             step("f", "x", "4,16,4096,128,causal"),  # its parent not built: the step alone
             step("g", "f", "3,5,4096,64,causal")]  # not a ladder shape: nothing
    work = profiling.judged_profile_work(steps, {"a", "b", "c", "d", "f", "g"}, ladder, profiled)
    assert work == {causal_64: ["a", "b", "c"], causal_128: ["f"]}


def test_stop_rule_guard_keeps_a_median_between_two_modes_sampling():
    from lab.measure import timing

    rule = timing.StopRule(rel_ci=0.005, cap_s=5.0, min_samples=50)
    rng = np.random.default_rng(0)
    unimodal = rng.lognormal(np.log(100.0), 0.01, 400)
    assert rule.met_by(unimodal)
    # A comb: 177 of 400 samples in a mode 3 % below the main one, so the median sits at the
    # main mode's lower edge: the 95 % CI (ranks 200 +- ~20) stays in the main mode, the 99 %
    # one (200 +- ~26) reaches the other.
    comb = np.concatenate([rng.normal(97.0, 0.05, 177), rng.normal(100.0, 0.05, 223)])
    rng.shuffle(comb)
    assert stats.relative_ci_halfwidth(comb) <= 0.005
    assert stats.relative_ci_halfwidth(comb, 0.99) > 0.01
    assert not rule.met_by(comb)
    assert timing.StopRule(rel_ci=0.005, cap_s=5.0, min_samples=50, guard_confidence=None).met_by(comb)  # old rule
    assert not rule.met_by(unimodal[:40])  # the minimum count still holds


def test_interleave_stops_each_row_by_its_rule_and_records_why(monkeypatch):
    from lab.measure import timing

    class Clock:  # the wall clock of lab.measure.timing: 1 ms a block (a real one made this test take 20 s)
        now = 0.0

        @classmethod
        def perf_counter(cls):
            return cls.now

    monkeypatch.setattr(timing, "time", Clock)

    class FakeTimer:
        def __init__(self, draw):
            self.draw = draw

        def samples(self, n):
            Clock.now += 0.001
            return [self.draw() for _ in range(n)]

    rng = np.random.default_rng(1)
    halves = iter([97.0, 100.0] * 100000)  # two equal modes: the median's CI always spans the gap
    timers = {"steady": FakeTimer(lambda: float(rng.lognormal(np.log(50.0), 0.01))),
              "comb": FakeTimer(lambda: next(halves))}
    state = timing.interleave(timers, timing.StopRule(rel_ci=0.005, cap_s=0.05, min_samples=50))
    assert state["steady"]["stopped_by"] == "ci" and len(state["steady"]["samples"]) % 10 == 0
    assert state["comb"]["stopped_by"] == "cap"
    assert len(state["comb"]["samples"]) > len(state["steady"]["samples"])


def _one_line_exit(cmd, code):
    import subprocess
    import sys

    from lab.kernels.variants import REPO

    proc = subprocess.run([sys.executable, *cmd], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    return proc.stderr.strip()


def test_pipeline_rejects_nonsense_shapes_before_anything_else():
    # as `make ablation SHAPES=nonsense` runs it: no GPU check, no run, no report first
    line = _one_line_exit(["-m", "lab.pipeline", "--shapes", "nonsense"], 2)
    assert "SHAPES='nonsense'" in line and "expected B,H,S,D" in line


@pytest.mark.parametrize("argv, needle", [
    (["--variants", "wmma,nope"], "VARIANTS: unknown variant(s) nope; known: baseline"),
    (["--shapes", "4,16,512,96"], "D one of (64, 128)"),
    (["--shapes", "0,16,512,64"], "B, H and S must be at least 1"),
    (["--modes", "hot,warm"], "a comma-separated subset of hot, cold"),
    (["--check", "maybe"], "CHECK='maybe': one of full, quick, none"),
    (["--profile", "2"], "PROFILE=2: 0 or 1"),
    (["--cap", "0"], "CAP=0: seconds per (implementation, shape, mode), more than 0"),
    (["--cap", "abc"], "argument --cap: invalid float value"),
    (["--rel-ci", "5"], "between 0 and 1"),
    (["--min-samples", "0"], "MIN_SAMPLES=0: at least 1"),
    (["--profile-shapes", "some"], "invalid choice: 'some'"),
    (["--peers", "sdpa_flash,nope"], "PEERS='sdpa_flash,nope': unknown peer(s) nope; known: sdpa_flash"),
    (["--resume", "nope"], "--resume nope: no such run"),
])
def test_pipeline_names_the_broken_constraint_in_one_line(argv, needle, capsys, monkeypatch):
    from lab import pipeline

    monkeypatch.setattr(pipeline, "execute", lambda *a, **k: pytest.fail("a stage ran despite a bad parameter"))
    try:
        code = pipeline.main(argv)
    except SystemExit as exc:  # argparse's own checks (types, choices)
        code = exc.code
    err = capsys.readouterr().err.strip()
    assert code == 2 and needle in err and len(err.splitlines()) == 1, err


def test_pipeline_accepts_every_peer_it_knows(monkeypatch):
    import argparse

    from lab.measure import peers
    from lab import pipeline

    args = argparse.Namespace(shapes="canonical,large", variants="", modes="hot,cold", check="quick", profile=1,
                              cap_s=3.0, rel_ci=0.005, min_samples=50, peers=",".join(peers.known_names()), resume="")
    pipeline.validate(args)  # raises on a bad parameter


def test_compare_of_an_unknown_run_is_one_line():
    line = _one_line_exit(["-m", "lab", "compare", "nope"], 2)
    assert line.startswith("python -m lab compare: run 'nope': no such run under")


def test_a_block_of_samples_waits_behind_the_gpu_sleep_or_fails_loudly(monkeypatch):
    """timed_blocks enqueues its launches behind torch.cuda._sleep; without it, it refuses to time."""
    import torch

    from lab.measure import timing

    calls = []
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: calls.append(cycles), raising=False)
    timing._gpu_sleep()()
    assert calls == [timing.SLEEP_CYCLES]
    monkeypatch.delattr(torch.cuda, "_sleep")
    with pytest.raises(RuntimeError, match="torch.cuda._sleep"):
        timing.timed_blocks(3, lambda: calls.append("launch"))
    assert calls == [timing.SLEEP_CYCLES], "nothing was launched or timed"


def test_a_run_keeps_its_childrens_bytecode_where_the_environment_forbids_writing_it(tmp_path):
    from lab.pipeline import keep_childrens_bytecode

    env = {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/bin"}
    assert keep_childrens_bytecode(env, tmp_path) == str(tmp_path / "build" / "pycache")
    assert env == {"PATH": "/bin", "PYTHONPYCACHEPREFIX": str(tmp_path / "build" / "pycache")}
    mine = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/mine"}
    assert keep_childrens_bytecode(mine, tmp_path) is None and mine["PYTHONPYCACHEPREFIX"] == "/mine"
    plain = {"PATH": "/bin"}
    assert keep_childrens_bytecode(plain, tmp_path) is None and plain == {"PATH": "/bin"}


def test_a_compressed_record_reads_back_and_an_old_plain_one_still_reads(tmp_path):
    import gzip
    import json

    from lab.measure.records import COMPRESSED, RunRecord

    assert "correctness.json" in COMPRESSED
    rec = RunRecord("r1", root=tmp_path)
    rows = [{"variant": "wmma", "case": f"c{i}", "passed": i % 3 != 0} for i in range(50)]
    rec.write_json("correctness.json", rows)
    assert not rec.path("correctness.json").exists() and rec.has("correctness.json")
    assert json.loads(gzip.decompress(rec.path("correctness.json.gz").read_bytes())) == rows
    assert rec.read_json("correctness.json") == rows
    first = rec.path("correctness.json.gz").read_bytes()
    rec.write_json("correctness.json", rows)
    assert rec.path("correctness.json.gz").read_bytes() == first  # no time or name in the header
    old = RunRecord("r0", root=tmp_path)
    old.path("correctness.json").write_text(json.dumps(rows[:3]))  # a run recorded before compression
    assert old.has("correctness.json") and old.read_json("correctness.json") == rows[:3]
    rec.write_json("env.json", {"gpu": "x"})
    assert rec.path("env.json").exists() and not rec.path("env.json.gz").exists()


def _started_on(tmp_path, **env):
    """A run record whose env.json holds `env` over an H200's fields (what a start records)."""
    rec = records.RunRecord(root=tmp_path)
    rec.write_json("env.json", {"git_sha": "a" * 40, "git_dirty": False, "nvcc": "13.0", "torch": "2.11.0+cu130",
                                "cuda_runtime": "13.0", "gpu": "NVIDIA H200", "compute_capability": "9.0",
                                "sm_count": 132, "memory_bytes": 150_000_000_000, "l2_bytes": 62_914_560,
                                "power_limit_w": 700.0, "sm_clock_max_mhz": 1980, "gpu_uuid": "GPU-start",
                                "host": "first", "driver": "580.1", "code_digest": "c" * 64, **env})
    return rec


def test_a_run_resumes_on_another_gpu_of_its_model_and_records_where(tmp_path):
    from lab.studies import resume

    rec = _started_on(tmp_path)
    here = {**rec.read_json("env.json"), "utc": "2099-01-02T00:00:00+00:00", "host": "second",
            "gpu_uuid": "GPU-other", "driver": "580.2"}
    entry = resume.resume_here(rec, ["profile"], env_now=here)
    assert entry == {"utc": "2099-01-02T00:00:00+00:00", "host": "second", "gpu_uuid": "GPU-other",
                     "driver": "580.2", "same_gpu": False, "stages": ["profile"]}
    resume.resume_here(rec, [], env_now={**here, "gpu_uuid": "GPU-start"})  # a second resume, on the first GPU
    kept = rec.read_json("resumes.json")
    assert [r["host"] for r in kept] == ["second", "second"] and [r["same_gpu"] for r in kept] == [False, True]


@pytest.mark.parametrize("field, value", [("gpu", "NVIDIA H100 80GB HBM3"), ("power_limit_w", 500.0),
                                          ("git_sha", "b" * 40), ("sm_count", 114), ("nvcc", "12.8"),
                                          ("sm_clock_max_mhz", 1755), ("torch", "2.10.0+cu128"),
                                          ("code_digest", "d" * 64)])
def test_a_run_is_not_resumed_where_its_code_toolchain_or_gpu_model_differ(tmp_path, field, value):
    from lab.studies import resume

    rec = _started_on(tmp_path)
    here = {**rec.read_json("env.json"), field: value}
    with pytest.raises(ValueError, match=f"cannot be resumed on this machine: {field} "):
        resume.resume_here(rec, ["timing", "profile"], env_now=here)
    assert not rec.has("resumes.json")  # nothing recorded for a refused resume


def test_the_code_digest_follows_the_code_and_nothing_else(tmp_path):
    """records.code_digest over a tree made here: a changed byte, a new file or a moved file change it;
    bytecode caches and files outside lab/, kernels/ and notebooks/ do not; the hash is of path, length and bytes
    (computed here with hashlib from its definition)."""
    import hashlib

    (tmp_path / "lab").mkdir()
    (tmp_path / "kernels" / "variants").mkdir(parents=True)
    (tmp_path / "lab" / "a.py").write_bytes(b"x = 1\n")
    (tmp_path / "kernels" / "variants" / "k.cu").write_bytes(b"__global__ void k() {}\n")
    want = hashlib.sha256()
    for rel, data in (("kernels/variants/k.cu", b"__global__ void k() {}\n"), ("lab/a.py", b"x = 1\n")):
        want.update(f"{rel}\0{len(data)}\0".encode() + data)
    base = records.code_digest(tmp_path)
    assert base == want.hexdigest()
    (tmp_path / "lab" / "__pycache__").mkdir()
    (tmp_path / "lab" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"cache")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "run.json").write_text("{}")
    assert records.code_digest(tmp_path) == base
    (tmp_path / "lab" / "a.py").write_bytes(b"x = 2\n")
    assert records.code_digest(tmp_path) != base
    (tmp_path / "lab" / "a.py").write_bytes(b"x = 1\n")
    (tmp_path / "lab" / "b.py").write_bytes(b"")
    assert records.code_digest(tmp_path) != base
    (tmp_path / "lab" / "b.py").unlink()
    (tmp_path / "lab" / "a.py").rename(tmp_path / "lab" / "c.py")
    assert records.code_digest(tmp_path) != base


def test_a_run_is_not_resumed_from_or_onto_a_dirty_tree(tmp_path):
    from lab.studies import resume

    clean = {**_started_on(tmp_path).read_json("env.json")}
    with pytest.raises(ValueError, match="dirty here"):
        resume.resume_here(_started_on(tmp_path), ["profile"], env_now={**clean, "git_dirty": True})
    with pytest.raises(ValueError, match="dirty at its start"):
        resume.resume_here(_started_on(tmp_path, git_dirty=True), ["profile"], env_now=clean)


def test_the_report_says_where_a_resumed_run_went_on():
    from lab.report.validity import resumed_threat

    env = {"gpu": "NVIDIA H200", "gpu_uuid": "GPU-start"}
    assert resumed_threat([], env) is None
    text = resumed_threat([{"utc": "2099-01-02T00:00:00+00:00", "host": "second", "gpu_uuid": "GPU-other",
                            "driver": "580.2", "same_gpu": False, "stages": ["timing", "profile"]},
                           {"utc": "2099-01-03T00:00:00+00:00", "host": "first", "gpu_uuid": "GPU-start",
                            "driver": "580.1", "same_gpu": True, "stages": ["profile"]}], env)
    assert text.startswith("The run was stopped and resumed 2 time(s)")
    assert "timing, profile from 2099-01-02T00:00:00+00:00 on host `second`, another NVIDIA H200 (GPU-other)" in text
    assert "profile from 2099-01-03T00:00:00+00:00 on host `first`, the GPU it started on" in text
    # a start recorded before env.json named its GPU: the records cannot say whether it was the same one
    older = resumed_threat([{"host": "second", "gpu_uuid": "GPU-other", "same_gpu": False, "stages": ["profile"]}],
                           {"gpu": "NVIDIA H200"})
    assert "cannot tell from the one it started on" in older


def test_the_pipeline_runs_no_stage_of_a_run_it_may_not_resume(runs_dir, monkeypatch, capsys):
    """`python -m lab.pipeline --resume RUN` on a GPU of another model: exit 2 with the reason, no stage run;
    on the same model the stages left run and the resume is recorded."""
    import torch

    from lab import pipeline

    rec = _started_on(runs_dir)
    rec.write_json("stages.json", {"build_s": 1.0, "correctness_s": 2.0, "timing_s": 3.0})
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    ran = []
    monkeypatch.setattr(pipeline, "run_stages", lambda names, *a, **k: ran.append(names) or {})
    monkeypatch.setattr(pipeline, "execute", lambda *a, **k: 0.0)
    monkeypatch.setattr(pipeline, "keep_childrens_bytecode", lambda: None)  # leaves os.environ as the tests have it
    monkeypatch.setattr(records, "environment", lambda: {**rec.read_json("env.json"), "gpu": "NVIDIA H100 80GB HBM3"})
    assert pipeline.main(["--resume", rec.run_id, "--no-report"]) == 2
    assert "gpu 'NVIDIA H200' at its start, 'NVIDIA H100 80GB HBM3' here" in capsys.readouterr().err and ran == []
    monkeypatch.setattr(records, "environment", lambda: {**rec.read_json("env.json"), "host": "second"})
    assert pipeline.main(["--resume", rec.run_id, "--no-report"]) == 0
    assert ran == [["04_profile.ipynb"]] and rec.read_json("resumes.json")[0]["stages"] == ["profile"]
