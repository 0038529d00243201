"""Replicates of a run's timing (lab.studies.replicates) without a GPU: the stage's orchestration
with a fake timer (order, seeds, each replicate's share of the stopping rule, the `replicate`
column, the records the plan is folded into, the summary and the calibration computed from them),
the real child process in its `--fake` mode, a failing replicate, and a resumed plan."""

import gzip
import json
import math

import numpy as np
import pandas as pd
import pytest

from lab.kernels.shape import Shape
from lab.measure import records, stats
from lab.studies import ahead, derived, replicate_child, replicates, stages
from lab.studies.params import REPLICATE_SEED_STRIDE, RunParams

SHAPES = [[4, 16, 512, 64, False], [1, 8, 512, 64, True]]


def _run(root, **params):
    rec = records.RunRecord(run_id="20990103T000000Z-test", root=root)
    base = dict(variants=["wmma", "mma_sync", "async_pipeline"], shapes=SHAPES, shape_scopes=["ladder", "ladder"],
                modes=["hot", "cold"], cap_s=3.0, rel_ci=0.005, min_samples=50, profile=False, check="none",
                peers=["sdpa_flash"], backends=["flash"], seed=7, knockouts=False, replicates=3, stop_guard=[0.99, 2.0])
    rec.write_json("params.json", {**base, **params})
    rec.write_json("stages.json", {})
    return rec


@pytest.fixture
def gpu_free_stage(monkeypatch):
    """stage_timing's GPU-side neighbours replaced: cached builds, ceilings, peers, cross-validation."""
    from lab.measure import peers, profile

    class Built:
        def summary(self):
            return {}

    monkeypatch.setattr(stages, "_built", lambda rec: {n: Built() for n in RunParams.read(rec).variants})
    monkeypatch.setattr(stages, "run_peers", lambda rec: [type("P", (), {"name": "sdpa_flash"})()])
    monkeypatch.setattr(profile, "measure_ceilings", lambda: {})
    monkeypatch.setattr(stages, "cross_validate", lambda shape, peer: {})
    monkeypatch.setattr(peers, "SdpaPeer", lambda b: None)


def test_stage_timing_measures_each_replicate_in_turn_with_its_own_seeds_and_share(tmp_path, gpu_free_stage):
    rec = _run(tmp_path)
    p = RunParams.read(rec)
    calls = []

    def recording(shape, kernels, peers, modes, rule, clocks, run_id, aa, seed, progress=print):
        calls.append(dict(shape=shape, kernels=sorted(kernels), peers=[x.name for x in peers], modes=list(modes),
                          rule=rule, aa=aa, seed=seed))
        return replicate_child.fake_measure(shape, kernels, peers, modes, rule, clocks, run_id, aa, seed, progress)

    stages.stage_timing(rec, progress=lambda s: None, spawn=replicate_child.in_process(recording))

    # three replicates, one after another, each every shape in the run's order
    assert [c["shape"] for c in calls] == [Shape.of(s) for s in SHAPES] * 3
    # seeds: replicate r's interleave seed is the run's seed + the shape's index + r * stride (r = 0: as before)
    assert [c["seed"] for c in calls] == [7 + i + REPLICATE_SEED_STRIDE * r for r in range(3) for i in (1, 2)]
    # the budget shared out: +-0.5 % * sqrt(3), 3 s / 3, ceil(50 / 3) = 17 samples in blocks of ceil(17 / 2) = 9
    rule = calls[0]["rule"]
    assert rule.rel_ci == pytest.approx(0.005 * math.sqrt(3)) and rule.cap_s == pytest.approx(1.0)
    assert (rule.min_samples, rule.block) == (17, 9) and rule.guard_confidence == 0.99
    assert all(c["rule"] == rule for c in calls)
    assert all(c["kernels"] == ["async_pipeline", "mma_sync", "wmma"] and c["peers"] == ["sdpa_flash"] for c in calls)
    assert {c["aa"] for c in calls} == {"async_pipeline"}

    # the plan folded into the records: its working folder gone, the plan and each replicate's seeds
    # and notes in replicates.json, every sample once in samples.parquet, the stop records in stops.parquet
    assert not (rec.dir / "replicates").exists()
    log = rec.read_json("replicates.json")["timing"]
    plan = log["plan"]
    inputs = [r["input_seed"] for r in log["runs"]]
    assert inputs == [7, 7 + REPLICATE_SEED_STRIDE, 7 + 2 * REPLICATE_SEED_STRIDE] == \
        [replicates.replicate_seeds(plan, r)[0] for r in range(3)] == [p.replicate_seed(r) for r in range(3)]
    assert [r["job_seeds"] for r in log["runs"]] == [replicates.replicate_seeds(plan, r)[1] for r in range(3)]
    assert all([n["shape"] for n in r["notes"]] == [Shape.of(s).id for s in SHAPES] for r in log["runs"])
    stops = rec.read_stops()
    assert len(stops) == 5 * 2 * 2 * 3 and set(stops["plan"]) == {"timing"} and set(stops["stopped_by"]) == {"ci"}
    assert sorted(stops["replicate"].unique()) == [0, 1, 2]

    samples = rec.read_samples()
    assert list(samples.columns) == records.SAMPLE_COLUMNS
    assert sorted(samples["replicate"].unique()) == [0, 1, 2]
    # 18 samples (two blocks of 9) per impl, shape, mode and replicate: 4 impls + the A/A twin
    per = samples.groupby(["impl", "B", "S", "causal", "mode", "replicate"]).size()
    assert set(per) == {18} and len(per) == 5 * 2 * 2 * 3
    # replicates differ (their own seeds), and the summary's median is the median over them
    one = samples[(samples.impl == "wmma") & (samples.S == 512) & (samples.B == 4) & (samples["mode"] == "hot")]
    medians = one.groupby("replicate")["latency_us"].median()
    assert medians.nunique() == 3
    summ = derived.summary(rec)
    row = summ[(summ.impl == "wmma") & (summ.B == 4) & (summ["mode"] == "hot")].iloc[0]
    assert row["median_us"] == pytest.approx(math.exp(np.log(medians).mean()))
    assert row["n"] == 54 and row["stopped_by"] == "ci"
    assert row["ci_lo_us"] < row["median_us"] < row["ci_hi_us"]
    assert len(summ) == 5 * 2 * 2

    assert log["replicates"] == 3 and [r["replicate"] for r in log["runs"]] == [0, 1, 2]
    assert all(r["exit_code"] == 0 and r["jobs_done"] == 2 for r in log["runs"])
    # the stage's time outside its replicates, taken apart: each merge, the ceilings and the
    # cross-validation, every part a number of seconds inside the stage's own
    assert all(isinstance(r["merge_s"], float) and r["merge_s"] >= 0 for r in log["runs"])
    st = rec.read_json("stages.json")
    parts = st["parts"]["timing"]
    assert sorted(parts) == ["ceilings_s", "crossval_s"]
    assert all(v >= 0 for v in parts.values())
    assert sum(parts.values()) + sum(r["merge_s"] for r in log["runs"]) <= st["timing_s"] + 0.3  # rounding
    cal = derived.calibration(rec)
    # steps with a parent in the run: mma_sync (wmma), async_pipeline (mma_sync); 2 shapes x 2 modes x 3 left out
    assert cal["applicable"] and cal["replicates"] == 3 and cal["points"] == 2 * 2 * 2 * 3
    assert 0 <= cal["covered"] <= 1 and 0 <= cal["pred_covered"] <= 1
    assert {r["step"] for r in cal["rows"]} == {"mma_sync", "async_pipeline"}


def test_the_calibration_is_at_the_confidence_asked():
    """Each left-out interval is the asked confidence's: narrower at 0.80 than at 0.95 (three replicates whose
    medians differ, so that every interval has a width), and the expected coverage is that confidence's model."""
    from lab.studies.calibration import _leave_one_out

    rng = np.random.default_rng(3)
    shape = Shape.of("4,16,512,64")
    rows = [dict(run_id="r", impl=impl, B=shape.B, H=shape.H, S=shape.S, D=shape.D, causal=shape.causal,
                 H_kv=shape.H_kv, dtype=shape.dtype, mode="hot", sample=i, latency_us=us * (1 + 0.01 * r) *
                 float(rng.normal(1, 0.002)), sm_clock_mhz=1980.0, throttled=False, replicate=r, round=i)
            for impl, us in (("mma_sync", 100.0), ("wmma", 120.0)) for r in range(3) for i in range(20)]
    samples = pd.DataFrame(rows).reindex(columns=records.SAMPLE_COLUMNS)
    at = {c: _leave_one_out(samples, [("mma_sync", "wmma", shape, "hot")], "one pair", c, 200, 0) for c in (0.8, 0.95)}
    assert all(a["applicable"] and a["points"] == 3 and a["confidence"] == c for c, a in at.items())
    for r80, r95 in zip(at[0.8]["rows"], at[0.95]["rows"]):
        assert r95["lo"] < r80["lo"] < r80["hi"] < r95["hi"]
        assert r80["expected_covered"] < r95["expected_covered"]


def test_one_replicate_is_the_run_as_before(tmp_path, gpu_free_stage):
    rec = _run(tmp_path, replicates=1)
    calls = []

    def recording(shape, kernels, peers, modes, rule, clocks, run_id, aa, seed, progress=print):
        calls.append((seed, rule))
        return replicate_child.fake_measure(shape, kernels, peers, modes, rule, clocks, run_id, aa, seed, progress)

    stages.stage_timing(rec, progress=lambda s: None, spawn=replicate_child.in_process(recording))
    p = RunParams.read(rec)
    assert [s for s, _ in calls] == [8, 9] and all(r == p.stop_rule() for _, r in calls)
    assert set(rec.read_samples()["replicate"]) == {0}
    summ = derived.summary(rec)
    samples = rec.read_samples()
    one = samples[(samples.impl == "wmma") & (samples.B == 4) & (samples["mode"] == "hot")]["latency_us"]
    row = summ[(summ.impl == "wmma") & (summ.B == 4) & (summ["mode"] == "hot")].iloc[0]
    assert row["median_us"] == np.percentile(one, 50)  # exactly summarize's, as before
    assert (row["ci_lo_us"], row["ci_hi_us"]) == stats.median_ci(one.to_numpy())
    assert derived.calibration(rec) == {
        "replicates": 1, "confidence": 0.95, "applicable": False,
        "pairs": "every step against its parent, at every ladder shape and mode where both were measured",
        "reason": "this run has 1 replicate; leaving one out needs at least 3"}


def test_real_child_processes_fake_timer(tmp_path):
    """The child as the stage spawns it (`python -m lab.studies.replicate_child ... --fake`)."""
    rec = _run(tmp_path, replicates=2)
    p = RunParams.read(rec)
    jobs = [replicates.Job(Shape(4, 16, 512, 64, False), ["wmma"], True, ["hot"], "wmma", 8, "ladder")]
    replicates.write_plan(rec, "timing", jobs, {"wmma": {}}, ["sdpa_flash"], p.replicate_rule(), 2, p.seed)
    lines = []
    samples, stops, notes = replicates.run(rec, "timing", progress=lines.append, fake=True)
    assert sorted(samples["replicate"].unique()) == [0, 1]
    assert set(samples["impl"]) == {"wmma", "wmma__aa", "sdpa_flash"}
    assert len(stops) == 3 * 2 and len(derived.summarize(samples, stops)) == 3
    assert notes[0]["scope"] == "ladder" and notes[0]["seconds"] >= 0
    assert any("[timing] replicate 2 of 2: 1 shapes" in ln for ln in lines), lines  # one numbering, from 1


def test_a_failing_replicate_stops_the_rest_and_is_recorded(tmp_path):
    rec = _run(tmp_path, replicates=3)
    p = RunParams.read(rec)
    jobs = [replicates.Job(Shape(4, 16, 512, 64, False), ["wmma"], False, ["hot"], None, 8, "ladder")]
    replicates.write_plan(rec, "timing", jobs, {"wmma": {}}, [], p.replicate_rule(), 3, p.seed)
    good = replicate_child.in_process(replicate_child.fake_measure)
    spawned = []

    def second_fails(run_dir, plan, i, fake=False, progress=print):
        spawned.append(i)
        return good(run_dir, plan, i) if i == 0 else 3

    with pytest.raises(RuntimeError, match="replicate 1 of plan timing exited with code 3"):
        replicates.run(rec, "timing", progress=lambda s: None, spawn=second_fails)
    assert spawned == [0, 1]
    runs = rec.read_json("replicates.json")["timing"]["runs"]
    assert [(r["replicate"], r["exit_code"]) for r in runs] == [(0, 0), (1, 3)]
    with pytest.raises(FileExistsError):  # a plan is measured once per run
        replicates.write_plan(rec, "timing", jobs, {}, [], p.replicate_rule(), 3, p.seed)


def _two_job_plan(rec, replicates_n=3):
    p = RunParams.read(rec)
    jobs = [replicates.Job(Shape(4, 16, 512, 64, False), ["wmma"], False, ["hot"], None, 8, "ladder"),
            replicates.Job(Shape(1, 8, 512, 64, True), ["wmma"], False, ["hot"], None, 9, "ladder")]
    builds = {"wmma": {"key": "k1", "library": "/machine-a/build/wmma.so"}}
    replicates.write_plan(rec, "timing", jobs, builds, [], p.replicate_rule(), replicates_n, p.seed)
    return p, jobs, builds


def test_a_resumed_plan_keeps_whole_replicates_and_measures_the_stopped_one_again(tmp_path):
    """A run stopped inside replicate 1 (its first shape written, the second not): resumed, replicate
    0 is not measured again, replicate 1's partial files go to interrupted/ and it is measured again
    from its first shape, then replicate 2; the merge holds each replicate once."""
    rec = _run(tmp_path, replicates=3)
    _two_job_plan(rec)
    whole = replicate_child.in_process(replicate_child.fake_measure)
    assert whole(rec.dir, "timing", 0) == 0
    stop_after_one = []

    def stopped(shape, *args, **kw):
        if stop_after_one:
            raise KeyboardInterrupt  # the process killed midway (a time limit)
        stop_after_one.append(shape)
        return replicate_child.fake_measure(shape, *args, **kw)

    with pytest.raises(KeyboardInterrupt):
        replicate_child.in_process(stopped)(rec.dir, "timing", 1)
    partial = pd.read_parquet(replicates.plan_dir(rec.dir, "timing") / "r1.parquet")
    assert set(zip(partial.B, partial.S)) == {(4, 512)}  # one shape of two
    first_r0 = pd.read_parquet(replicates.plan_dir(rec.dir, "timing") / "r0.parquet")

    spawned = []

    def spawn(run_dir, plan, i, fake=False, progress=print):
        spawned.append(i)
        return whole(run_dir, plan, i)

    samples, stops, _ = replicates.run(rec, "timing", progress=lambda s: None, spawn=spawn)
    assert spawned == [1, 2]
    aside = replicates.plan_dir(rec.dir, "timing") / "interrupted"
    # the stopped attempt stays, compacted once the plan is folded in: its samples as measured, its record gzipped
    assert sorted(f.name for f in aside.iterdir()) == ["1-r1.json.gz", "1-r1.parquet"]
    assert pd.read_parquet(aside / "1-r1.parquet")["latency_us"].tolist() == partial["latency_us"].tolist()
    assert json.loads(gzip.decompress((aside / "1-r1.json.gz").read_bytes()))["jobs_done"] == 1
    assert sorted(samples["replicate"].unique()) == [0, 1, 2]
    per = samples.groupby("replicate").apply(lambda g: set(zip(g.B, g.S)), include_groups=False)
    assert all(v == {(4, 512), (1, 512)} for v in per)  # every replicate whole, none twice
    assert len(samples[samples.replicate == 1]) == len(samples[samples.replicate == 0])
    kept_r0 = samples[samples.replicate == 0].reset_index(drop=True)
    assert kept_r0["latency_us"].tolist() == first_r0["latency_us"].tolist()  # replicate 0 as measured first
    log = rec.read_json("replicates.json")["timing"]
    assert log["resumed"] is True and [r["replicate"] for r in log["runs"]] == [0, 1, 2]
    assert len(derived.summarize(samples, stops)) == 2


def test_a_resumed_plan_must_ask_for_the_same_measurement(tmp_path):
    rec = _run(tmp_path, replicates=3)
    p, jobs, builds = _two_job_plan(rec)
    moved = {"wmma": {"key": "k1", "library": "/machine-b/build/wmma.so"}}  # same build, another machine
    replicates.write_plan(rec, "timing", jobs, moved, [], p.replicate_rule(), 3, p.seed)
    assert replicates.read_plan(rec.dir, "timing")["builds"] == moved  # this machine's library paths
    for other in ([jobs[0]], {"wmma": {"key": "k2", "library": "/machine-b/build/wmma.so"}}):
        args = (other, moved) if isinstance(other, list) else (jobs, other)
        with pytest.raises(FileExistsError, match="asks for another measurement"):
            replicates.write_plan(rec, "timing", *args, [], p.replicate_rule(), 3, p.seed)
    with pytest.raises(FileExistsError):
        replicates.write_plan(rec, "timing", jobs, moved, [], p.replicate_rule(), 2, p.seed)


def test_a_stage_resumed_after_its_timing_runs_only_the_factorial(tmp_path, gpu_free_stage, monkeypatch):
    rec = _run(tmp_path, replicates=3, knockouts=True)
    rec.write_json("stages.json", {"build_s": 1.0, "correctness_s": 1.0, "timing_s": 42.0})
    ran = []
    monkeypatch.setattr(stages, "factorial_stage",
                        lambda rec, progress, spawn, prebuild=None, pool=None: ran.append("factorial"))
    # the factorial's replicates kept from the stopped attempt count toward its stage, as the timing's do
    monkeypatch.setattr(replicates, "seconds_measured", lambda rec, plan: {"factorial": 12.5}.get(plan, 0.0))
    stages.stage_timing(rec, progress=lambda s: None, spawn=lambda *a, **k: pytest.fail("timing measured again"))
    assert ran == ["factorial"]
    st = rec.read_json("stages.json")
    assert st["timing_s"] == 42.0 and 12.5 <= st["factorial_s"] < 13.5 and st["resumed"] == {"factorial": 12.5}


def test_a_resumed_timing_stage_counts_the_seconds_of_the_replicates_kept(tmp_path):
    rec = _run(tmp_path, replicates=3)
    _two_job_plan(rec)
    assert replicates.seconds_measured(rec, "timing") == 0.0
    whole = replicate_child.in_process(replicate_child.fake_measure)
    whole(rec.dir, "timing", 0)
    whole(rec.dir, "timing", 1)
    runs = [{"replicate": 0, "exit_code": 0, "seconds": 100.0}, {"replicate": 1, "exit_code": 0, "seconds": 30.5},
            {"replicate": 2, "exit_code": -9, "seconds": 7.0}]  # 2 was stopped: no child record in full
    rec.write_json("replicates.json", {"timing": {"runs": runs}})
    assert replicates.seconds_measured(rec, "timing") == 130.5
    stages._timed_stage(rec, "timing", lambda: None, lambda s: None, earlier_s=130.5)
    st = rec.read_json("stages.json")
    assert st["resumed"] == {"timing": 130.5} and 130.5 <= st["timing_s"] < 131.5
    stages.finish(rec)  # the total counts the stage once: 130.5 s and this call's instant
    assert 130.5 <= rec.read_json("stages.json")["total_s"] < 131.5


def test_runs_recorded_before_replicates_read_back_as_one(tmp_path):
    rec = records.RunRecord(run_id="20990104T000000Z-old", root=tmp_path)
    old_columns = records.SAMPLE_COLUMNS[:records.SAMPLE_COLUMNS.index("replicate")]  # before replicates (and rounds)
    rows = [dict(run_id=rec.run_id, impl="wmma", B=1, H=8, S=512, D=64, causal=False, dtype="float16", mode="hot",
                 sample=i, latency_us=10.0 + i, sm_clock_mhz=1980.0, throttled=False) for i in range(5)]
    rec.write_table("samples.parquet", pd.DataFrame(rows, columns=old_columns))
    assert "replicate" not in rec.read_table("samples.parquet").columns
    assert list(rec.read_samples()["replicate"]) == [0] * 5
    # written by code that knew the column but not the value: NaN reads as replicate 0 too
    assert list(records.with_replicate(pd.DataFrame(rows, columns=records.SAMPLE_COLUMNS))["replicate"]) == [0] * 5
    old = {"variants": ["wmma"], "shapes": [[1, 8, 512, 64, False]], "modes": ["hot"], "cap_s": 3.0, "rel_ci": 0.005,
           "profile": True, "check": "full", "backends": ["flash"], "seed": 0}
    p = RunParams.from_json(old)
    assert p.replicates == 1 and p.replicate_rule() == p.stop_rule()
    assert RunParams().replicates == 3


def test_a_bad_replicate_count_is_named():
    with pytest.raises(ValueError, match="--replicates / REPLICATES=0: at least 1"):
        RunParams.from_text(replicates="0")
    rule = RunParams.from_text(replicates="5", min_blocks="2").replicate_rule()
    assert (rule.min_samples, rule.block) == (10, 5) and rule.cap_s == pytest.approx(0.6)


def test_the_kept_results_computed_ahead_are_what_the_report_reads(tmp_path, gpu_free_stage, monkeypatch):
    """ahead.warm (the profile stage's background process) keeps the summary and both calibrations: read
    later, they are the same values without being computed again."""
    monkeypatch.setattr(derived, "CACHE", tmp_path / "derived")
    rec = _run(tmp_path, replicates=2)
    stages.stage_timing(rec, progress=lambda s: None, spawn=replicate_child.in_process(replicate_child.fake_measure))
    assert ahead.warm(rec) == ["summary", "calibration", "sustained-calibration"]
    assert len(list((tmp_path / "derived").iterdir())) == 3
    want = derived.summary(rec), derived.calibration(rec), derived.sustained_calibration(rec)

    def computed(*args, **kwargs):
        raise AssertionError("computed again")

    monkeypatch.setattr(derived, "summarize", computed)
    from lab.studies import calibration as cal

    monkeypatch.setattr(cal, "leave_one_out_run", computed)
    monkeypatch.setattr(cal, "leave_one_out_sustained", computed)
    got = derived.summary(rec), derived.calibration(rec), derived.sustained_calibration(rec)
    assert got[0].equals(want[0]) and got[1:] == want[1:]


def test_the_kept_results_are_started_ahead_at_a_lower_priority_unless_keeping_is_off(tmp_path, monkeypatch):
    rec = records.RunRecord(run_id="20990105T000000Z-k", root=tmp_path)
    started = []
    monkeypatch.delenv("LAB_WORKERS", raising=False)
    proc = ahead.start(rec, popen=lambda cmd, **kw: started.append((cmd, kw)) or "proc")
    assert proc == "proc"
    cmd, kw = started[0]
    assert cmd[1:4] == ["-m", "lab.studies.ahead", str(rec.dir)] and cmd[4:] == ["--nice", str(ahead.NICE)]
    from lab.measure import parallel

    assert 1 <= int(kw["env"]["LAB_WORKERS"]) <= parallel.MAX_WORKERS  # half the cores, at most the pool's cap
    monkeypatch.setenv("LAB_DERIVED_CACHE", "0")
    assert ahead.start(rec, popen=lambda *a, **kw: pytest.fail("nothing to keep")) is None


def test_a_background_module_names_a_run_it_cannot_find(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(records, "RUNS_DIR", tmp_path)
    with pytest.raises(SystemExit) as exc:
        ahead.main(["20990105T000000Z-none"])
    assert exc.value.code == 2 and "no run '20990105T000000Z-none'" in capsys.readouterr().err
    rec = records.RunRecord(run_id="20990105T000000Z-empty", root=tmp_path)
    assert ahead.main([str(rec.dir)]) == 0 and capsys.readouterr().out == "kept: nothing to keep\n"
