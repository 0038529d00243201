"""CPU tests of the tuner: the space's constraints and names, the dispatch rule and its choice,
the report section, and the search loop on a dask LocalCluster with a synthetic latency model."""

from __future__ import annotations

import json
import math

from pathlib import Path

import pandas as pd
import pytest

from lab.studies.tuning import dispatch as td
from lab.report import tuning as tuning_report
from lab.studies.params import TuneParams
from lab.studies.tuning.space import space, spill_reason
from lab.kernels.manifest import tuned_kernel

# The kernel whose tile constants are tuned (the sm_90a branch's end, read from the manifest), so that
# a new step at the end of the branch leaves these tests as they are.
END = tuned_kernel()

SP = space(END)
TUNING_RUNS = Path(__file__).resolve().parents[1] / "data" / "tuning"
SHORT_TILE_KNOBS = "bc64,st64,wgs64,bc128,st128,wgs128,pw"  # the short-sequence tile's constants alone
SHORT = SP.restricted(SHORT_TILE_KNOBS)


# --- the space ------------------------------------------------------------------------------


def test_defaults_are_legal_and_build_without_defines():
    for d in (64, 128):
        cfg = SP.default(d)
        assert SP.violations(cfg) == []
        assert SP.defines(cfg) == {}
        assert SP.impl_name(cfg) == END
    assert SP.smem_bytes(SP.default(64)) == (64 * 64 + 2 * 3 * 128 * 64) * 2 + 1024
    assert SP.ctas_per_sm(SP.default(64)) == 2 and SP.ctas_per_sm(SP.default(128)) == 1


def test_the_kernels_knock_outs_are_legal_configurations():
    assert SP.violations(SP.config(64, {"wgs64": 2})) == []  # two_ctas_per_sm knocked out
    assert SP.violations(SP.config(128, {"bc128": 64, "st128": 4})) == []  # wide_kv_tiles_d128 knocked out


@pytest.mark.parametrize("d, values, needle", [
    (64, {"st64": 4}, "shared memory per SM 282624 B (2 CTAs"),
    (128, {"st128": 4}, "shared memory per CTA 295936 B > 232448 B"),
    (128, {"wgs128": 1}, "ping-pong needs 2 consumer warpgroups"),
    (64, {"bc64": 96}, "FA_TILE_BC_D64=96 is not a legal value"),
    (64, {"st64": 1}, "FA_TILE_STAGES_D64=1 is not a legal value"),
    # (64*64 + 2*3*192*64)*2 + 1024 = 156672 B a CTA, two CTAs an SM with one warpgroup
    (64, {"stl64": 3}, "long tile: shared memory per SM 315392 B (2 CTAs x (156672 + 1024) B)"),
    # (64*64 + 2*3*128*64)*2 + 1024 = 107520 B a CTA, always three CTAs an SM
    (64, {"stt64": 3}, "three-CTA tile: shared memory per SM 325632 B (3 CTAs x (107520 + 1024) B)"),
    # 192 keys in 4 stages with one warpgroup: (64*64 + 2*4*192*64)*2 + 1024 = 205824 B a CTA, two CTAs an SM
    # (with two warpgroups, 214016 B and one CTA: legal, in the count of test_legal_space_and_what_is_searched)
    (64, {"stl64": 4}, "long tile: shared memory per SM 413696 B (2 CTAs x (205824 + 1024) B)"),
    # step 53's three-warpgroup tile: (192*64 + 2*7*128*64)*2 + 1024 = 254976 B, one CTA an SM
    (64, {"stw64": 7}, "three-warpgroup tile: shared memory per CTA 254976 B > 232448 B"),
    # the counter's three-warpgroup tile takes bc64 and st64: at 7 stages of 128 keys it needs
    # (192*64 + 2*7*128*64)*2 + 1024 = 254976 B (the short tile with two warpgroups too much as well: 246784 B)
    (64, {"wgs64": 2, "bc64": 128, "st64": 7}, "three-warpgroup tile from the counter: shared memory per CTA 254976 B"),
])
def test_illegal_configurations_name_the_constraint(d, values, needle):
    reasons = SP.violations(SP.config(d, values))
    assert any(needle in r for r in reasons), reasons


def test_ping_pong_rule_follows_the_switch():
    cfg = SP.config(128, {"wgs128": 1, "bc128": 64, "st128": 2})
    assert any("ping-pong" in r for r in SP.violations(cfg))
    assert not any("ping-pong" in r for r in SP.violations(cfg, {"FA_PING_PONG": 0}))


def test_legal_space_and_what_is_searched():
    assert len(SHORT.legal(64)) == 19 and len(SHORT.legal(128)) == 7
    assert [p.short for p in SHORT.searched(64)] == ["bc64", "st64", "wgs64"]
    assert [p.short for p in SHORT.searched(128)] == ["bc128", "st128"]  # WGS pinned by ping-pong
    # the whole space: D = 64's long-sequence and three-CTA tiles too (their constants and thresholds)
    assert [p.short for p in SP.searched(64)] == ["bc64", "st64", "wgs64", "bcl64", "stl64", "ls64", "bct64", "stt64",
                                                  "tsm64", "ttp64", "stw64"]
    assert SP.legal(128) == SHORT.legal(128)
    # every legal short tile goes with every legal long and three-CTA tile and every threshold:
    # long (BC, STAGES) per WGS = 1: (128, 2), (128, 3), (192, 2); WGS = 2 adds (128, 4), (192, 3), (192, 4) (one
    # CTA an SM); three-CTA (64, 2), (64, 3), (128, 2); thresholds 3 x 3 x 3; the three-warpgroup tile's stages
    # 2, 3 and 4 (192 rows, one CTA an SM: at most 156672 B)
    wgs1 = sum(1 for c in SHORT.legal(64) if c["wgs64"] == 1)
    assert len(SP.legal(64)) == (wgs1 * 3 + (19 - wgs1) * 6) * 3 * 27 * 3


def test_knobs_pin_the_other_tunables_and_an_unknown_one_is_named():
    only = SP.restricted("bc64, bcl64")
    assert [p.short for p in only.searched(64)] == ["bc64", "bcl64"]
    assert {(c["bc64"], c["bcl64"]) for c in only.legal(64)} == {(64, 128), (64, 192), (128, 128), (128, 192)}
    assert all(c["st64"] == 3 and c["stl64"] == 2 and c["ls64"] == 4096 for c in only.legal(64))
    # beside the pinned 192-key long tile and two CTAs an SM, only its default 2 stages fit: nothing to search
    assert SP.restricted("stl64").searched(64) == [] and len(SP.restricted("stl64").legal(64)) == 1
    assert SP.restricted("") is SP
    with pytest.raises(ValueError, match="KNOBS: nope not a tunable of"):
        SP.restricted("bc64,nope")


def test_config_rejects_parameters_of_the_other_head_dim():
    with pytest.raises(KeyError, match="belongs to D = 128"):
        SP.config(64, {"bc128": 64})
    with pytest.raises(KeyError, match="no tunable"):
        SP.config(64, {"nope": 1})


def test_impl_names_round_trip_for_every_legal_configuration():
    for d in (64, 128):
        for cfg in SP.legal(d):
            name = SP.impl_name(cfg)
            assert SP.parse_impl(name, head_dim=d) == cfg
            assert name == END or name.startswith(f"{END}@")
    assert SP.impl_name(SP.config(64, {"wgs64": 2})) == f"{END}@wgs64=2"
    assert SP.impl_name(SP.config(64, {"st64": 2, "bc64": 64})) == f"{END}@bc64=64,st64=2"  # sorted
    assert SP.defines(SP.parse_impl(f"{END}@bc64=64,st64=4")) == {"FA_TILE_BC_D64": 64, "FA_TILE_STAGES_D64": 4}


@pytest.mark.parametrize("bad", [f"{END}@bc64=64,bc128=64", "other@bc64=64", f"{END}@bc64", END])
def test_parse_impl_rejects_bad_names(bad):
    with pytest.raises(ValueError):
        SP.parse_impl(bad)


def test_spill_reason():
    assert spill_reason([{"kernel": "k", "head_dim": 64, "spill_stores": 0, "spill_loads": 0}]) == ""
    why = spill_reason([{"kernel": "k", "head_dim": 64, "spill_stores": 8, "spill_loads": 4}])
    assert "8 B spill stores" in why and "D = 64" in why


# --- the dispatch rule ----------------------------------------------------------------------


def test_shape_class_rule():
    assert td.shape_class(64, True, 1024) == "D64-causal-short"
    assert td.shape_class(64, True, 1025) == "D64-causal-long"
    assert td.shape_class(128, False, 1) == "D128-full-short"


class _Kernel:
    def __init__(self, name):
        self.name, self.calls = name, []

    def launch(self, q, k, v, out, is_causal=False, scale=None):
        self.calls.append((tuple(q.shape), is_causal))


class _T:  # a stand-in tensor: the dispatch reads only the shape in `launch`
    def __init__(self, *shape):
        self.shape = shape


def test_dispatch_picks_the_kernel_of_the_shape_class():
    table = {"variant": END, "run_id": "r", "classes": {
        "D64-full-short": {"impl": f"{END}@bc64=64", "defines": {"FA_TILE_BC_D64": 64}}}}
    tuned, default = _Kernel(f"{END}@bc64=64"), _Kernel(END)
    attn = td.TunedDispatch(table, {f"{END}@bc64=64": tuned}, default)
    assert attn.name == f"{END}+tuned"
    attn.launch(_T(2, 4, 512, 64), None, None, None, False)
    attn.launch(_T(2, 4, 4096, 64), None, None, None, False)  # long: not in the table
    attn.launch(_T(2, 4, 512, 64), None, None, None, True)  # causal: not in the table
    assert tuned.calls == [((2, 4, 512, 64), False)]
    assert len(default.calls) == 2
    assert attn.entry_for(64, False, 100)["impl"] == f"{END}@bc64=64"
    with pytest.raises(ValueError, match="not loaded"):
        td.TunedDispatch(table, {}, default)


def test_committed_dispatch_table_is_readable_and_names_legal_configurations():
    table = td.read_table()
    assert table["variant"] == END and "classes" in table
    for cls, entry in table["classes"].items():
        d = int(cls.split("-")[0][1:])
        cfg = SP.parse_impl(entry["impl"], head_dim=d)
        assert SP.violations(cfg) == [] and SP.defines(cfg) == {k: int(v) for k, v in entry["defines"].items()}


def _trial_rows(trial, impl, shapes, ratios, halfwidth=0.01):
    rows = []
    for (B, H, S, D, causal), r in zip(shapes, ratios):
        rows.append(dict(kind="trial", status="ok", mode="hot", trial=trial, impl=impl, B=B, H=H, S=S, D=D,
                         causal=causal, config="{}", ratio_to_default=r, ratio_to_default_lo=r - halfwidth,
                         ratio_to_default_hi=r + halfwidth))
    return rows


def test_choose_table_from_a_synthetic_tuning_table():
    short64 = [(8, 16, 512, 64, False), (4, 16, 256, 64, False)]  # one class, two shapes
    long128 = [(4, 16, 4096, 128, False)]
    rows = _trial_rows(0, END, short64 + long128, [1.0, 1.0, 1.0])
    rows += _trial_rows(1, f"{END}@bc64=64", short64, [1.10, 1.06])  # clear winner of D64-full-short
    rows += _trial_rows(2, f"{END}@st64=2", short64[:1], [1.30])  # pruned after one shape: not comparable
    rows += _trial_rows(3, f"{END}@st128=2", long128, [1.004], halfwidth=0.01)  # interval includes 1
    rows += [dict(kind="trial", status="build_failed", mode="hot", trial=4, impl=f"{END}@bc128=64", B=1, H=1,
                  S=1, D=128, causal=False)]
    table = td.choose_table(pd.DataFrame(rows), run_id="RUN")
    assert table["run_id"] == "RUN"
    assert set(table["classes"]) == {"D64-full-short"}
    entry = table["classes"]["D64-full-short"]
    assert entry["impl"] == f"{END}@bc64=64" and entry["defines"] == {"FA_TILE_BC_D64": 64}
    assert entry["ratio"] == pytest.approx(math.sqrt(1.10 * 1.06))
    assert entry["ci_lo"] > 1 and entry["shapes"] == 2
    assert "D128-full-long" in table["considered"]  # considered, default kept


def test_heldout_verdicts_flag_overfitting():
    dispatch = {"variant": END, "classes": {"D64-full-short": {}, "D128-full-long": {}, "D64-causal-long": {}}}
    held = pd.DataFrame([
        dict(status="ok", shape_class="D64-full-short", config=f"{END}@bc64=64", ratio_to_default=1.05,
             ratio_to_default_lo=1.03, ratio_to_default_hi=1.07),
        dict(status="ok", shape_class="D128-full-long", config=f"{END}@st128=4", ratio_to_default=0.99,
             ratio_to_default_lo=0.985, ratio_to_default_hi=0.995),
        # a class that keeps the default: the default against itself, never counted as slower
        dict(status="ok", shape_class="D64-full-long", config=END, ratio_to_default=0.988,
             ratio_to_default_lo=0.986, ratio_to_default_hi=0.990),
    ])
    rows, classes = tuning_report.heldout_verdicts(held, dispatch)
    assert list(rows["verdict"]) == ["faster", "slower", "same kernel: A/A (slower)"]
    assert classes == {"D64-full-short": "validated", "D128-full-long": "overfitted",
                       "D64-causal-long": "not validated"}


# --- the worker and the search loop (fake GPU) ----------------------------------------------


def test_run_task_records_an_exception_instead_of_raising():
    from lab.studies.tuning.worker import Task, run_task

    class Broken:
        def gpu(self):
            return {"gpu_index": 3, "gpu_name": "fake", "gpu_uuid": "FAKE-3"}

        def build(self, *a):
            raise OSError("disk full")

    out = run_task(Task(kind="trial", run_id="r", variant=END, shape=(1, 1, 64, 64, False), impl="x"), Broken)
    (row,) = out["rows"]
    assert row["status"] == "error" and "disk full" in row["reason"] and row["gpu_index"] == 3


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory):
    """A whole tuning run (A/A, search, dispatch, held-out) on a 2-worker LocalCluster with the
    synthetic latency model; every legal configuration measured (brute force, no pruning)."""
    from distributed import Client, LocalCluster

    from lab.studies.tuning import run as tuning
    from lab.studies.tuning.fake import FakeBackend

    root = tmp_path_factory.mktemp("tuning")
    params = TuneParams(trials=26, sampler="bruteforce", prune=False, fake=True, min_samples=20,
                               budget_s=0, knobs=SHORT_TILE_KNOBS)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        rec = tuning.tune(params, progress=lambda s: None, client=client, backend=FakeBackend, root=root)
    return rec.dir


def test_search_records_every_trial_and_every_failure(fake_run):
    tuning_df = pd.read_parquet(fake_run / "tuning.parquet")
    statuses = set(tuning_df["status"])
    assert {"ok", "invalid", "build_failed", "spills", "incorrect", "launch_error"} <= statuses
    assert statuses <= {"ok", "invalid", "build_failed", "spills", "incorrect", "launch_error", "skipped",
                        "duplicate", "pruned"}
    measured = tuning_df[tuning_df["status"] == "ok"]
    assert set(measured["gpu_index"]) == {0, 1}  # both workers measured trials
    assert measured["gpu_uuid"].str.startswith("FAKE-").all()
    assert set(measured.drop_duplicates("impl")["impl"]) >= {s for d in (64, 128) for s in
                                                             map(SHORT.impl_name, SHORT.legal(d))} - {
        f"{END}@bc64=64,st64=8,wgs64=2", f"{END}@bc64=64,st64=7,wgs64=2", f"{END}@bc128=64,st128=6",
        f"{END}@bc128=64,st128=2"}
    for _, g in tuning_df[tuning_df["kind"] == "trial"].groupby("trial"):  # one row per trial x shape
        assert len(g) == 2 and g["step"].tolist() == [0, 1] or g["status"].iloc[0] in ("invalid", "duplicate")
    samples = pd.read_parquet(fake_run / "samples.parquet")
    assert samples["gpu_index"].notna().all() and {"aa", "trial", "heldout"} <= set(samples["kind"])
    wall = json.loads((fake_run / "wall.json").read_text())
    assert wall["workers"] == 2 and wall["submitted"] >= 26 - 1
    assert json.loads((fake_run / "status.json").read_text())["state"] == "complete"


def test_search_finds_the_synthetic_optimum(fake_run):
    table = json.loads((fake_run / "dispatch.json").read_text())
    assert table["classes"]["D64-full-short"]["impl"] == f"{END}@bc64=64,st64=5,wgs64=2"
    assert table["classes"]["D64-causal-long"]["impl"] == f"{END}@bc64=64,st64=5,wgs64=2"
    assert table["classes"]["D128-full-long"]["impl"] == f"{END}@bc128=64,st128=4"


def test_aa_and_heldout_are_recorded(fake_run):
    aa = pd.read_parquet(fake_run / "aa.parquet")
    assert set(aa[aa["comparison"].isna()]["gpu_index"]) == {0, 1}  # within each GPU
    assert set(aa[aa["comparison"] == "across"]["gpu_index"]) == {0, 1}
    held = pd.read_parquet(fake_run / "heldout.parquet")
    assert len(held) == 8 and (held["status"] == "ok").all()
    assert held["impl"].eq(f"{END}+tuned").all()
    tuned = held[held["shape_class"] == "D64-full-short"]
    assert (tuned["ratio_to_default_lo"] > 1).all()
    check = json.loads((fake_run / "heldout_check.json").read_text())
    assert check[0]["status"] == "ok" and check[0]["cases"] == 116


def test_report_section_and_figure_from_the_run_folder(fake_run, tmp_path):
    text = tuning_report.section(fake_run)
    for heading in ("## Autotuning", "### Leaderboard", "### Dispatch table", "### Held-out shapes", "### A/A"):
        assert heading in text
    assert f"`{END}@bc64=64,st64=5,wgs64=2`" in text
    assert "on 2 worker(s)" in text and "D64-full-short: **validated**" in text
    out = tuning_report.write(fake_run, tmp_path / "report")
    assert out.read_text().startswith("## Autotuning")
    assert (tmp_path / "report" / "trials.png").stat().st_size > 10_000


def test_sticky_cuda_errors_mark_the_worker_for_a_restart():
    from lab.studies.tuning.worker import poisoned

    rows = [{"worker_address": "tcp://a", "reason": "RuntimeError: CUDA error: an illegal memory access was encountered"},
            {"worker_address": "tcp://b", "reason": "FA_TILE_BC_D64=96 is not a legal value"},
            {"worker_address": "", "reason": "unspecified launch failure"}]
    assert poisoned(rows) == {"tcp://a"}


def test_report_compares_one_and_several_workers(tmp_path):
    """Two runs of the same search, with 1 and 2 workers: the section shows the speedup table."""
    from distributed import Client, LocalCluster

    from lab.studies.tuning import run as tuning
    from lab.studies.tuning.fake import FakeBackend

    runs = []
    for n in (1, 2):
        params = TuneParams(trials=4, gpus=str(n), fake=True, min_samples=20, budget_s=0, heldout=False)
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
                Client(cluster) as client:
            runs.append(tuning.tune(params, progress=lambda s: None, client=client, backend=FakeBackend, root=tmp_path))
    text = tuning_report.section(runs[1].dir)
    assert "One against several GPUs" in text
    assert runs[0].run_id in text and runs[1].run_id in text
    assert "Not measured." in text  # no held-out phase in these runs


def test_register_and_thread_budget_mirrors_the_kernel():
    # wgmma_attention.cuh: 2 warpgroups, 1 CTA/SM: 168 at launch -> 40 / 232; 1, 2 CTAs/SM: 128 -> 24 / 232
    assert SP.threads(SP.default(128)) == 384 and SP.consumer_registers(SP.default(128)) == 232
    assert SP.threads(SP.default(64)) == 256 and SP.consumer_registers(SP.default(64)) == 232
    limits = dict(SP.limits, consumer_registers=240)
    tight = type(SP)(SP.variant, SP.params, limits)
    reasons = tight.violations(tight.default(64))
    assert any(r.startswith("registers:") for r in reasons), (reasons, tight.limits)


def test_successive_halving_prunes_and_records_the_shapes_left_out(tmp_path):
    from distributed import Client, LocalCluster

    from lab.studies.tuning import run as tuning
    from lab.studies.tuning.fake import FakeBackend

    params = TuneParams(trials=16, sampler="tpe", fake=True, min_samples=20, budget_s=0, heldout=False)
    # one worker: the trials finish in the order they were asked for, so which ones TPE proposes and the pruner
    # compares does not hang on two workers' race (with two, a loaded CI machine once saw no trial pruned)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        rec = tuning.tune(params, progress=lambda s: None, client=client, backend=FakeBackend, root=tmp_path)
    df = pd.read_parquet(rec.dir / "tuning.parquet")
    pruned = df[df["status"] == "pruned"]
    assert not pruned.empty and (pruned["step"] == 1).all()  # the second shape, not measured
    for trial in pruned["trial"]:  # ... after the first was
        first = df[(df["trial"] == trial) & (df["step"] == 0)]
        assert first["status"].tolist() == ["ok"]
    assert "successive halving" in pruned["reason"].iloc[0]


def test_a_hanging_configuration_times_out_and_the_search_goes_on(tmp_path):
    import time as _time

    from distributed import Client, LocalCluster

    from lab.studies.tuning import run as tuning
    from lab.studies.tuning.fake import FakeBackend

    class Hanging(FakeBackend):
        def measure(self, shape, kernels, *args):
            if any(getattr(k, "params", {}).get("st128") == 5 for k in kernels.values()):
                _time.sleep(3)  # a kernel that never finishes, as far as the client can tell
            return super().measure(shape, kernels, *args)

    params = TuneParams(shapes="8,16,512,128,causal;4,16,4096,128", trials=7, sampler="bruteforce",
                               prune=False, fake=True, min_samples=20, budget_s=0, heldout=False, task_timeout_s=1.0)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        rec = tuning.tune(params, progress=lambda s: None, client=client, backend=Hanging, root=tmp_path)
    df = pd.read_parquet(rec.dir / "tuning.parquet")
    late = df[df["status"] == "timeout"]
    assert late["impl"].tolist() == [f"{END}@bc128=64,st128=5"] and "no result after 1 s" in late["reason"].iloc[0]
    assert (df["status"] == "ok").sum() >= 4  # the others were measured


def test_a_table_tuned_for_another_step_is_named_where_the_branch_end_has_none(tmp_path, monkeypatch):
    """When the branch end moves on, the old end's committed dispatch table stays: the Autotuning section
    and the generated docs say whose it was and which run chose it, instead of only "no tuning run"."""
    from lab.report import docs
    from lab.report.sections import studies

    monkeypatch.setattr(td, "VARIANTS_DIR", tmp_path)
    assert td.other_steps_note("step_b") == ""  # no table at all
    td.write_table({"variant": "step_a", "run_id": "20260101T000000Z-abc1234", "rule": td.RULE, "classes": {}},
                   tmp_path / "dispatch_step_a.json")
    td.write_table({"variant": "step_c", "run_id": None, "rule": td.RULE, "classes": {}},
                   tmp_path / "dispatch_step_c.json")  # never tuned: nothing to say about it
    section = "\n".join(studies.section_tuning(None, variant="step_b"))
    assert "no tuning run has chosen a configuration yet" in section
    assert "`dispatch_step_a.json` by run `20260101T000000Z-abc1234` for `step_a`" in section
    assert "another step than `step_b`" in section and "step_c" not in section
    assert "for `step_a`" in docs.tuning("step_b")
    # the step's own table is not "another step's"
    td.write_table({"variant": "step_b", "run_id": None, "rule": td.RULE, "classes": {}},
                   tmp_path / "dispatch_step_b.json")
    assert [t["variant"] for t in td.tables_of_other_steps("step_b")] == ["step_a", "step_c"]
    assert "step_b.json" not in td.other_steps_note("step_b")


def test_a_large_space_starts_from_a_seeded_sample_of_legal_configurations():
    """Past PREBUILD_MAX legal configurations a run prebuilds and proposes first a seeded sample of legal
    ones (half the trials, shared out among the head dims), so most trials are legal and built in
    parallel; a space small enough to prebuild whole starts from the default alone."""
    import optuna

    from lab.studies.tuning import run as tuning
    from lab.studies.tuning.search import Search, SearchSettings

    assert tuning.starting_configs(SHORT, [64, 128], 150, 0) == {}  # 26 legal: prebuilt whole
    start = tuning.starting_configs(SP, [64, 128], 150, 0)
    # half the 150 trials, 75: D = 128 has 6 besides its default, and leaves the other 69 to D = 64
    assert {d: len(cs) for d, cs in start.items()} == {64: 69, 128: 6}
    # the random sampler: every trial but the two defaults, 148, the same way: 142 and 6
    everything = tuning.starting_configs(SP, [64, 128], 150, 0, "random")
    assert {d: len(cs) for d, cs in everything.items()} == {64: 142, 128: 6}
    assert all(not SP.violations(c) and c != SP.default(d) for d, cs in everything.items() for c in cs)
    assert len(set(everything[64])) == 142
    assert {d: len(cs) for d, cs in tuning.starting_configs(SP, [64], 20, 0, "random").items()} == {64: 19}
    for d, cs in start.items():
        assert len(set(cs)) == len(cs) and SP.default(d) not in cs and all(not SP.violations(c) for c in cs)
    assert tuning.starting_configs(SP, [64, 128], 150, 0) == start  # seeded
    assert tuning.starting_configs(SP, [64, 128], 150, 1)[64] != start[64]
    # the study proposes the default, then the starting configurations, in order
    search = Search.__new__(Search)
    search.space, search.run_id = SP, "t"
    search.s = SearchSettings(variant=END, shapes=[], trials=150, sampler="random",
                              enqueue={64: [c.as_dict() for c in start[64][:3]]})
    study = search._study(64)
    waiting = [t.system_attrs["fixed_params"]
               for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))]
    searched = [p.short for p in SP.searched(64)]
    assert waiting == [{s: c[s] for s in searched} for c in [SP.default(64), *start[64][:3]]]


def test_legal_configurations_are_the_product_filtered_by_every_constraint():
    """legal() decides legality on the constrained parameters alone and pairs every legal combination with
    every value of the free ones (thresholds, scheduler choices): the same set as filtering the whole product."""
    import itertools

    sub = SP.restricted("bc64,st64,wgs64,stl64,stt64,ls64,tsm64")
    params = sub.of_head_dim(64)
    every = [sub.config(64, dict(zip([p.short for p in params], combo)))
             for combo in itertools.product(*(p.values for p in params))]
    assert set(sub.legal(64)) == {c for c in every if not sub.violations(c)}
    assert len(sub.legal(64)) == len(set(sub.legal(64))) > 0


def test_the_docs_name_the_make_line_a_tuning_run_was_made_by():
    """docs/autotuning.md's recorded search: every parameter that differs from make tune's defaults and
    the switches given, read back from params.json (the committed run was started as `python -m lab tune
    --trials 200 --budget 120 --gpus 2 --sampler bruteforce --no-dispatch-update`)."""
    from lab.report.docs import tune_command

    committed = json.loads((TUNING_RUNS / "20261128T083709Z-2c86c27" / "params.json").read_text())
    assert tune_command(committed) == ("make tune TRIALS=200 SAMPLER=bruteforce GPUS=2 BUDGET=120 "
                                       "TUNE_FLAGS=--no-dispatch-update")
    assert tune_command({"variant": END, "trials": 16, "cap_s": 1.0, "prune": True, "fake": False}) == "make tune"
    assert tune_command({"variant": END, "knobs": "bc64", "cap_s": 0.5, "prune": False, "heldout": False}) == (
        "make tune CAP=0.5 KNOBS=bc64 TUNE_FLAGS='--no-prune --no-heldout'")


def test_the_section_names_later_searches_of_the_same_step_and_what_their_held_out_checks_kept(tmp_path):
    """A later real run of the same variant is listed with what its held-out check kept; an earlier run, a
    run of another variant, a --fake run and a run without wall.json are not."""
    import json

    def run(name, variant, fake=False, wall=True, table=None):
        d = tmp_path / name
        d.mkdir()
        (d / "params.json").write_text(json.dumps({"variant": variant, "sampler": "random", "fake": fake}))
        if wall:
            (d / "wall.json").write_text(json.dumps({"submitted": 150, "workers": 4, "total_s": 198.4}))
        if table is not None:
            (d / "dispatch_committed.json").write_text(json.dumps(table))
        return d

    table = {"classes": {"D64-full-short": {"impl": "v@st64=2", "ratio": 1.0086, "ci_lo": 1.0061, "ci_hi": 1.0111}},
             "considered": {"D64-full-short": "ignored: it is kept", "D128-full-long": "best v x0.994 over 1 shape(s)"}}
    run("20990101T000000Z-a", "v")
    mine = run("20990102T000000Z-b", "v")
    run("20990103T000000Z-c", "v", table=table)
    run("20990104T000000Z-d", "w", table=table)
    run("20990105T000000Z-e", "v", fake=True, table=table)
    run("20990106T000000Z-f", "v", wall=False, table=table)
    lines = tuning_report.later_runs(mine)
    assert lines == ["- Run `20990103T000000Z-c`: 150 configurations (random sampler) on 4 GPU(s) in 198 s. "
                     "D64-full-short: `v@st64=2` kept, 1.009 [1.006, 1.011] on its tuning shapes; "
                     "D128-full-long: the default, best v x0.994 over 1 shape(s)."]
    assert tuning_report.later_runs(tmp_path / "20990103T000000Z-c") == []


def test_a_search_proposes_the_committed_tables_configurations_first():
    """A later search of a large space measures the committed table's configurations again (first among its
    starting ones, so its held-out check judges them beside its own); a table of another step, or an empty
    one, adds nothing; a committed configuration that is not legal in the space is not proposed."""
    from lab.studies.tuning import dispatch
    from lab.studies.tuning import run as tuning

    st2 = SP.parse_impl(f"{END}@st64=2", 64)
    table = {"variant": END, "classes": {"D64-full-short": {"impl": f"{END}@st64=2"},
                                         "D64-causal-long": {"impl": f"{END}@st64=2"}}}
    first = tuning.committed_configs(SP, table)
    assert first == {64: [st2]}  # two classes, one configuration
    assert tuning.committed_configs(SP, {**table, "variant": "another_step"}) == {}
    assert tuning.committed_configs(SP, {"variant": END, "classes": {}}) == {}
    start = tuning.starting_configs(SP, [64, 128], 150, 0, "random", first)
    assert start[64][0] == st2 and len(start[64]) == len(set(start[64])) == 142 and len(start[128]) == 6
    assert tuning.starting_configs(SP, [64, 128], 150, 0, "random", {64: [SP.default(64)]})[64][0] != SP.default(64)
    # the committed table of the repository names st64=2 at D64-full-short (data/tuning/20261128T083709Z-2c86c27),
    # tuned for step 36: for the branch end since step 48 it is another step's and adds nothing
    committed = dispatch.read_table(variant="uniform_descriptors")
    assert committed["classes"]["D64-full-short"]["impl"] == "uniform_descriptors@st64=2"
    assert tuning.committed_configs(SP, committed) == {}
