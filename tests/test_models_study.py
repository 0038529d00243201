"""CPU tests of the `models` study (issue 22): timing the inputs real models run (K/V heads, bf16),
skipping and recording what an implementation does not take, the models shape set and its scope,
and old run records reading as before. Expected values are written out by hand."""

import json

import pytest
import torch

from lab.kernels.shape import Shape
from lab.measure import peers, records, stats
from lab.studies.measure_shape import input_sets, measure_shape

from tests.ladder import SM90_END as END  # the sm_90a branch's last step
from tests.ladder import SM90_END_PARENT as PARENT


class _Kernel:
    """A built variant without a GPU: records the tensors each launch gets; takes `dtypes`/`kv_heads`."""

    def __init__(self, name, dtypes=("fp16",), kv_heads="same"):
        self.name, self.dtypes, self.kv_heads, self.launched = name, dtypes, kv_heads, []

    def not_taken(self, shape):
        from lab.kernels.shape import not_taken

        return not_taken(f"variant {self.name!r}", self.dtypes, self.kv_heads, shape.dtype, shape.H, shape.H_kv)

    def launch(self, q, k, v, out, causal, scale=None):
        self.launched.append((tuple(q.shape), tuple(k.shape), tuple(v.shape), tuple(out.shape), q.dtype, k.dtype))


def _cpu_measure(monkeypatch, shape, kernels, peer_list):
    """measure_shape on the CPU: inputs on the CPU, timers that launch each closure once, 5 samples of 10 us."""
    from lab.measure import timing

    real_randn = torch.randn
    monkeypatch.setattr(torch, "randn", lambda *a, device=None, **kw: real_randn(*a, **kw))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda *a: None)
    monkeypatch.setattr(timing, "l2_bytes", lambda: 1 << 30)

    class OnceTimer:
        def __init__(self, launches):
            launches[0]()

    def interleave(timers, rule, clocks=None, seed=0, context_of=None):
        return {n: {"samples": [10.0] * 5, "clock_mhz": [1980.0] * 5, "throttled": [False] * 5, "stopped_by": "ci"}
                for n in timers}

    monkeypatch.setattr(timing, "HotTimer", OnceTimer)
    monkeypatch.setattr(timing, "interleave", interleave)
    return measure_shape(shape, kernels, peer_list, ["hot"], rule=None, clocks=None, run_id="r", aa_impl=None,
                         seed=0, progress=lambda s: None)


def test_a_model_shape_times_what_takes_it_with_k_v_heads_and_bf16_and_records_the_rest(monkeypatch):
    shape = Shape.parse("2,8,64,64,causal,kv2,bf16")
    model, tma = _Kernel("model_inputs", ("fp16", "bf16"), "grouped"), _Kernel("tma")
    samples, summary, notes = _cpu_measure(monkeypatch, shape, {"model_inputs": model, "tma": tma},
                                           [peers.SdpaPeer("math")])
    assert model.launched[0] == ((2, 8, 64, 64), (2, 2, 64, 64), (2, 2, 64, 64), (2, 8, 64, 64), torch.bfloat16,
                                 torch.bfloat16)
    assert tma.launched == []
    assert notes["not_taken"] == {"tma": "variant 'tma' takes float16 only (its manifest dtypes); got bfloat16"}
    assert notes["unsupported"] == {} and notes["shape"] == "B2-H8-S64-D64-causal-kv2-bf16"
    assert sorted({r["impl"] for r in summary}) == ["model_inputs", "sdpa_math"]
    assert {(r["H_kv"], r["dtype"]) for r in samples} == {(2, "bfloat16")}
    row = next(r for r in summary if r["impl"] == "model_inputs")
    assert (row["H"], row["H_kv"], row["dtype"]) == (8, 2, "bfloat16")
    # Q and O: 2*8*64*64 elements each; K and V: 2*2*64*64 each; 2 bytes; 10 us
    assert row["gbps"] == pytest.approx((2 * 2 * 8 * 64 * 64 + 2 * 2 * 2 * 64 * 64) * 2 / 10e-6 / 1e9)
    # the FLOP count does not change with grouping: 4*B*H*S*S*D, halved for causal
    assert row["tflops"] == pytest.approx(4 * 2 * 8 * 64 * 64 * 64 / 2 / 10e-6 / 1e12)


def test_a_plain_shape_is_measured_as_before(monkeypatch):
    tma = _Kernel("tma")
    samples, summary, notes = _cpu_measure(monkeypatch, Shape(1, 2, 32, 64, True), {"tma": tma}, [])
    assert tma.launched[0][:4] == ((1, 2, 32, 64),) * 4 and tma.launched[0][4] == torch.float16
    assert notes["not_taken"] == {} and {(r["H_kv"], r["dtype"]) for r in samples} == {(2, "float16")}


def test_input_sets_count_k_v_heads_and_bytes():
    l2 = 50 * 2**20
    # plain (4, 16, 512, 64): Q, K, V, O of 4 MiB each, 16 MiB a set: ceil(2 x 50 / 16) = 7 (as before issue 22)
    assert input_sets(Shape(4, 16, 512, 64, False), l2) == 7
    # 8 K/V heads of 32: Q, O 2 x 8 MiB, K, V 2 x 2 MiB = 20 MiB a set: ceil(100 / 20) = 5
    assert input_sets(Shape(4, 32, 512, 64, False, 8, "bf16"), l2) == 5


def test_effective_bandwidth_counts_k_v_once():
    assert stats.effective_gbps(1, 8, 1000, 64, 1.0) == pytest.approx(4 * 8 * 1000 * 64 * 2 / 1e-6 / 1e9)
    assert stats.effective_gbps(1, 8, 1000, 64, 1.0, 2, 1) == pytest.approx((2 * 8 + 2 * 1) * 1000 * 64 * 2 / 1e-6 / 1e9)


def test_old_tables_read_with_h_kv_equal_to_h_and_fp16():
    import pandas as pd

    old = pd.DataFrame([dict(impl="tma", B=4, H=16, S=512, D=64, causal=False, dtype="float16", mode="hot",
                             latency_us=1.0, throttled=False)])
    filled = records.with_replicate(old)
    assert filled.loc[0, "H_kv"] == 16 and filled.loc[0, "replicate"] == 0
    assert Shape.from_row(filled.iloc[0]) == Shape(4, 16, 512, 64, False)
    summary = records.with_shape_columns(old.drop(columns=["dtype"]))
    assert (summary.loc[0, "H_kv"], summary.loc[0, "dtype"]) == (16, "float16")
    new = pd.DataFrame([dict(B=2, H=32, S=8, D=128, causal=True, H_kv=8, dtype="bfloat16")])
    assert Shape.from_row(records.with_shape_columns(new).iloc[0]) == Shape.parse("2,32,8,128,causal,kv8,bf16")


# --- the models set, its scope and its budget -----------------------------------------------------

def test_the_models_set_is_prefill_of_the_named_models_at_8192_tokens():
    from lab.studies import shapes

    got = {(s.spec, shapes.model_names(s)) for s in shapes.shape_set("models")}
    assert got == {
        ("4,32,2048,128,causal,kv8,bf16", ("Llama-3-8B", "Mistral-7B")),
        ("1,32,8192,128,causal,kv8,bf16", ("Llama-3-8B", "Mistral-7B")),
        ("4,64,2048,128,causal,kv8,bf16", ("Llama-3-70B",)),
        ("1,64,8192,128,causal,kv8,bf16", ("Llama-3-70B",)),
        ("4,28,2048,128,causal,kv4,bf16", ("Qwen2.5-7B",)),
        ("1,28,8192,128,causal,kv4,bf16", ("Qwen2.5-7B",)),
        ("4,71,2048,64,causal,kv1,bf16", ("Falcon-7B",)),
        ("1,71,8192,64,causal,kv1,bf16", ("Falcon-7B",)),
        ("4,12,2048,64,causal,bf16", ("GPT-2", "BERT-base")),
        ("1,12,8192,64,causal,bf16", ("GPT-2", "BERT-base")),
    }
    # enough work to fill the GPU: 128-row query tiles, at least 5 waves on 132 SMs for every model
    assert min(s.B * s.H * s.S // 128 for s in shapes.shape_set("models")) / 132 > 5
    assert shapes.model_names(Shape(4, 16, 4096, 64, False)) == ()


def test_models_are_in_the_default_run_with_their_own_scope():
    from lab.studies.params import RunParams

    p = RunParams()
    scopes = p.scopes
    assert scopes[Shape.parse("1,71,8192,64,causal,kv1,bf16")] == "models"
    assert scopes[Shape(4, 16, 4096, 64, False)] == "ladder" and p.as_text()["shapes"] == "canonical,large,long,sweep,models"
    assert RunParams.from_json(p.to_json()) == p  # params.json keeps the 7-element model shapes
    assert [7, 5] == sorted({len(s) for s in p.to_json()["shapes"]}, reverse=True)
    explicit = RunParams.from_text(shapes="2,32,512,128,causal,kv8,bf16;4,16,512,64")
    assert explicit.shapes == (Shape(2, 32, 512, 128, True, 8, "bf16"), Shape(4, 16, 512, 64, False))


class _Build:
    def __init__(self, name, takes_models=False):
        self.name, self.takes_models = name, takes_models

    def not_taken(self, shape):
        return "" if shape.plain or self.takes_models else f"variant {self.name!r} takes float16 only"


def test_timing_jobs_at_a_models_shape_time_what_takes_it_within_the_budget():
    from lab.studies import stages
    from lab.studies.params import RunParams

    p = RunParams.from_text(shapes="models", variants=f"{END},portable_model_inputs,tma", replicates="3", cap_s="3")
    kernels = ["tma", END, "portable_model_inputs", *stages.knockout_configs(p)]
    builds = {n: _Build(n) for n in kernels}
    jobs = stages.timing_jobs(p, kernels, not_taken=lambda n, s: builds[n].not_taken(s))
    d64 = next(j for j in jobs if j.shape == Shape.parse("4,71,2048,64,causal,kv1,bf16"))
    # nothing here takes bf16: the branch ends, the knock-outs applying at D = 64 and their kernels are all
    # recorded as not taken; the peers are still measured; no A/A twin; hot and cold
    assert d64.impls == [] and d64.peers and d64.aa is None and d64.modes == ["hot", "cold"]
    assert "tma" not in d64.not_taken, "not a branch end: not in the models scope at all"
    assert set(d64.not_taken) == {END, "portable_model_inputs"} | {
        n for n in kernels if "~no_" in n and n not in (f"{END}~no_ping_pong_d128", f"{END}~no_wide_kv_tiles_d128",
                                                        f"{END}~no_wgmma_overlap",
                                                        f"{END}~no_tma_store_d128",
                                                        f"{END}~no_pipeline_state_d128",
                                                        f"{END}~no_non_causal_kernels_d128",
                                                        f"{END}~no_uniform_row0_d128")}  # the D = 128-only switches
    assert d64.not_taken[END] == f"variant '{END}' takes float16 only"
    # the scope's budget: 0.15 s a row over the run, 0.05 s in each of 3 replicates
    assert d64.cap_s == pytest.approx(0.05)
    # SDPA's default dispatch, a duplicate of one of the backends, is not timed at the models shapes only
    assert {tuple(j.peers_left_out) for j in jobs if j.scope == "models"} == {("sdpa_default",)}
    assert all(j.peers_left_out == [] for j in stages.timing_jobs(RunParams.from_text(shapes="canonical"), kernels))
    builds[END].takes_models = builds[f"{END}~no_tma"].takes_models = True
    jobs = stages.timing_jobs(p, kernels, not_taken=lambda n, s: builds[n].not_taken(s))
    d128 = next(j for j in jobs if j.shape == Shape.parse("1,64,8192,128,causal,kv8,bf16"))
    assert d128.impls == [END, f"{END}~no_tma"]
    assert f"{END}~no_two_ctas_per_sm" not in d128.not_taken  # its switch changes D = 64 only


def test_a_models_budget_above_the_runs_cap_leaves_the_runs_rule():
    from lab.studies import stages
    from lab.studies.params import RunParams

    p = RunParams.from_text(shapes="models", variants=END, cap_s="0.1", replicates="1", knockouts="0")
    assert {j.cap_s for j in stages.timing_jobs(p, [END])} == {None}


def test_a_replicate_applies_a_jobs_cap_and_records_what_was_not_taken(tmp_path):
    from lab.studies import derived, replicate_child, replicates
    from lab.studies.params import RunParams

    rec = records.RunRecord(run_id="20990104T000000Z-test", root=tmp_path)
    p = RunParams.from_text(replicates="2", cap_s="3")
    shape = Shape.parse("1,12,512,64,causal,bf16")
    jobs = [replicates.Job(shape, ["m"], True, ["hot"], None, 5, "models", {"tma": "variant 'tma' takes float16 only"},
                           0.075, ["sdpa_default"]),
            replicates.Job(Shape(4, 16, 512, 64, False), ["m"], False, ["hot"], None, 6, "ladder"),
            replicates.Job(Shape(4, 16, 512, 64, True), ["m"], True, ["hot"], None, 7, "ladder")]
    replicates.write_plan(rec, "timing", jobs, {"m": {}}, ["sdpa_flash", "sdpa_default"], p.replicate_rule(), 2,
                          p.seed)
    rules, peers_measured = [], []

    def recording(shape, kernels, peers_, modes, rule, clocks, run_id, aa, seed, progress=print):
        rules.append(rule.cap_s)
        peers_measured.append([q.name for q in peers_])
        return replicate_child.fake_measure(shape, kernels, peers_, modes, rule, clocks, run_id, aa, seed, progress)

    samples, stops, notes = replicates.run(rec, "timing", lambda s: None, spawn=replicate_child.in_process(recording))
    summary = derived.summarize(samples, stops)
    assert rules == [0.075, 1.5, 1.5] * 2  # the models job's cap; the ladder jobs keep the run's 3 s / 2
    # the models job leaves out the peer its scope names; a job without peers measures none; the rest all
    assert peers_measured == [["sdpa_flash"], [], ["sdpa_flash", "sdpa_default"]] * 2
    assert notes[0]["not_taken"] == {"tma": "variant 'tma' takes float16 only"} and notes[1]["not_taken"] == {}
    row = summary[summary.impl == "m"].set_index("H").loc[12]
    assert (row["H_kv"], row["dtype"]) == (12, "bfloat16")
    # a plan written before jobs had these fields reads with none
    old = replicates.Job.from_json({k: v for k, v in jobs[2].to_json().items()
                                    if k not in ("not_taken", "cap_s", "peers_left_out")})
    assert old.not_taken == {} and old.cap_s is None and old.peers_left_out == []


# --- the report's models section -------------------------------------------------------------------

MODEL_SHAPES = [Shape.parse("4,32,2048,128,causal,kv8,bf16"), Shape.parse("1,71,8192,64,causal,kv1,bf16")]
FP16_TWIN = Shape.parse("4,32,2048,128,causal,kv8")
# true medians (us) by implementation: the sm_90a end 10 % faster than cuDNN (the fastest peer), the portable
# end half as fast; flex_attention 1.4x cuDNN's time; at the fp16 twin the sm_90a end 1 % faster than in bf16
TRUE = {"ftz_exp2": 0.90, "small_grid_tiles": 2.0, "sdpa_cudnn": 1.0, "sdpa_flash": 1.8, "flex_attention": 1.4}


CLOCK_STEP = 1.10  # _models_run(clock_step=True): the clock slows every row by this from round 10 on
# _models_run(sustained=True): the sustained mode at the first model shape only, the step and cuDNN alone (the mode's
# rows), the step 5 % slower than cuDNN there where it is 10 % faster hot
SUSTAINED_TRUE = {"ftz_exp2": 1.05, "sdpa_cudnn": 1.0}


def _models_run(root, with_models=True, clock_step=False, sustained=False):
    """A models run on a synthetic H100. clock_step: every sample records its round (one a round),
    and at the first model shape, cold, the step (ftz_exp2) samples 30 rounds while the peers stop
    after 10, the clock CLOCK_STEP times slower from round 10 on: its median then mixes two clock
    states, its round-paired ratio does not."""
    import numpy as np
    import pandas as pd

    from lab.studies.shapes import HEADLINE

    rec = records.RunRecord(run_id="20990105T000000Z-models", root=root)
    shapes = [HEADLINE] + (MODEL_SHAPES + [FP16_TWIN] if with_models else [])
    rec.write_json("env.json", {"gpu": "NVIDIA H100 80GB HBM3", "sm_count": 132, "utc": "2099-01-05T00:00:00+00:00"})
    rec.write_json("params.json", {"variants": ["ftz_exp2", "small_grid_tiles"],
                                   "shapes": [list(s.astuple()) for s in shapes],
                                   "shape_scopes": ["ladder"] + ["models"] * (len(shapes) - 1),
                                   "modes": ["hot", "cold"] + (["sustained"] if sustained else []),
                                   "cap_s": 3.0, "rel_ci": 0.005, "min_samples": 50,
                                   "profile": False, "check": "full", "knockouts": False,
                                   "peers": ["sdpa_flash", "sdpa_cudnn", "flex_attention"],
                                   "backends": ["flash", "cudnn"], "replicates": 3, "seed": 0,
                                   "stop_guard": [0.99, 2.0]})
    launch = {"64": {"rows_per_block": 64}, "128": {"rows_per_block": 128}}
    rec.write_json("build.json", {
        "ftz_exp2": {"ok": True, "variant": "ftz_exp2", "dtypes": ["fp16", "bf16"], "kv_heads": "grouped",
                     "launch": launch},
        "small_grid_tiles": {"ok": True, "variant": "small_grid_tiles", "dtypes": ["fp16"], "kv_heads": "same",
                             "launch": launch}})
    rec.write_json("correctness.json", [
        dict(variant="ftz_exp2", case="a", B=2, H=8, S=17, D=64, causal=True, H_kv=2, dtype="bf16", passed=True,
             unsupported=""),
        dict(variant="small_grid_tiles", case="a", B=2, H=8, S=17, D=64, causal=True, H_kv=2, dtype="bf16",
             passed=False, unsupported="not taken: variant 'small_grid_tiles' takes float16 only"),
        dict(variant="ftz_exp2", case="b", B=2, H=3, S=17, D=64, causal=True, H_kv=3, dtype="fp16", passed=True,
             unsupported="")])
    rng = np.random.default_rng(0)
    rows = []
    for r in range(3):
        for s in shapes:
            work = s.B * s.H * s.S * s.S * s.D / 1e9
            for mode in ("hot", "cold"):
                for impl, t in TRUE.items():
                    if impl == "small_grid_tiles" and not s.plain:
                        continue  # it does not take bf16 or grouped K/V heads
                    med = work * t * (0.99 if (s == FP16_TWIN and impl == "ftz_exp2") else 1.0)
                    stepped = clock_step and s == MODEL_SHAPES[0] and mode == "cold"
                    n = 30 if stepped and impl == "ftz_exp2" else 20 if not stepped else 10
                    clock = np.where(np.arange(n) >= 10, CLOCK_STEP, 1.0) if stepped else np.ones(n)
                    for i, x in enumerate(med * clock * np.exp(rng.normal(0, 0.002) + rng.normal(0, 0.002, n))):
                        rows.append(dict(run_id=rec.run_id, impl=impl, B=s.B, H=s.H, S=s.S, D=s.D, causal=s.causal,
                                         H_kv=s.H_kv, dtype=s.torch_dtype_name, mode=mode, sample=i,
                                         latency_us=float(x), sm_clock_mhz=1980.0, throttled=False, replicate=r,
                                         round=i if clock_step else None))
        s = MODEL_SHAPES[0]
        work = s.B * s.H * s.S * s.S * s.D / 1e9
        for impl, t in (SUSTAINED_TRUE if sustained else {}).items():
            for i, x in enumerate(work * t * np.exp(rng.normal(0, 0.002) + rng.normal(0, 0.002, 20))):
                rows.append(dict(run_id=rec.run_id, impl=impl, B=s.B, H=s.H, S=s.S, D=s.D, causal=s.causal,
                                 H_kv=s.H_kv, dtype=s.torch_dtype_name, mode="sustained", sample=i,
                                 latency_us=float(x), sm_clock_mhz=1600.0, throttled=False, replicate=r,
                                 round=None, power_w=690.0))
    rec.write_table("samples.parquet", pd.DataFrame(rows, columns=records.SAMPLE_COLUMNS))
    rec.write_json("stages.json", {"timing_s": 1.0, "between": {"flex_warmup_wait_s": 2.5}})
    # what the set cost: 2.5 s a models job in each replicate, 4 s the ladder's; flex_attention's compiles
    timing = rec.dir / "replicates" / "timing"
    timing.mkdir(parents=True)
    for r in range(3):
        notes = [{"shape": s.id, "scope": "ladder" if s == HEADLINE else "models",
                  "seconds": 4.0 if s == HEADLINE else 2.5} for s in shapes]
        (timing / f"r{r}.json").write_text(json.dumps({"replicate": r, "notes": notes}))
    rec.write_json("flex_warmup.json", {"shapes": [{"shape": s.id, "seconds": 7.0 if s == HEADLINE else
                                                    0.5 if s == FP16_TWIN else 1.25, "error": ""} for s in shapes],
                                        "seconds": 10.0, "failed": 0, "workers": 2})
    rec.finish("complete")
    return rec


def test_the_models_section_reports_every_model_shape_with_intervals(tmp_path):
    from lab.report.context import Context
    from lab.report.load import RunData
    from lab.report.sections.models import section_models

    ctx = Context.of(RunData(_models_run(tmp_path / "runs")), tmp_path / "reports")
    ctx.figdir.mkdir(parents=True)
    text = "\n".join(section_models(ctx))
    assert text.startswith("## The attention real models run")
    # the table: every model shape by its models' names, with the medians and TFLOP/s
    assert "| Llama-3-8B, Mistral-7B | (4, 32, 2048, 128) causal | 8 | bf16 |" in text
    assert "| Falcon-7B | (1, 71, 8192, 64) causal | 1 | bf16 |" in text
    assert text.count("**Median µs (TFLOP/s), hot.**") == 1 and "**Against the peers, cold.**" in text
    # this run timed no sdpa_default at the model shapes (as runs since SCOPE_PEERS_LEFT_OUT): the text says so
    assert "SDPA's default dispatch is not timed here, as it runs one of those backends" in text
    # its cost: 3 models jobs x 2.5 s x 3 replicates (the ladder's 4 s jobs not counted); compiles 2 x 1.25 + 0.5
    assert ("**What the set costs.** Its jobs took 22.5 s of the timing stage over the 3 replicates" in text
            and "flex_attention's compiles for its shapes took 3.0 s of the background warm-up (2 processes side by "
                "side, 10.0 s of wall time for every shape) beside the correctness stage" in text
            and "this run's timing stage waited 2.5 s for all of it, stages.json); "
                "its jobs and that wait came to 25.0 s of the run's wall time." in text)
    # the sm_90a end at 0.9x cuDNN's time: 1/0.9 = 1.111x the fastest peer, 1.4/0.9 = 1.556x flex_attention
    row = next(l for l in text.splitlines() if l.startswith("| Falcon-7B | (1, 71, 8192, 64, causal, kv1, bf16) | ftz_exp2"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == "sdpa_cudnn"
    assert float(cells[4].split("×")[0]) == pytest.approx(1 / 0.9, rel=0.01)
    assert float(cells[5].split("×")[0]) == pytest.approx(1.4 / 0.9, rel=0.01)
    # bf16 against its fp16 twin: 0.99 / 1 = 0.99x (within the 2 %)
    llama = next(l for l in text.splitlines() if l.startswith("| Llama-3-8B, Mistral-7B | (4, 32, 2048, 128, causal, "
                                                                "kv8, bf16) | ftz_exp2"))
    assert float(llama.split("|")[-2].split("×")[0]) == pytest.approx(0.99, rel=0.005)
    # the verdicts: 2 model shapes + the fp16 twin, each at or above the fastest peer and flex_attention
    assert ("`ftz_exp2`: at or above the fastest peer (interval's lower end above 0.99) at 3 of 3 shape × mode rows; "
            "at or above flex_attention at 3 of 3") in text
    assert "`small_grid_tiles`: at or above" not in text  # it takes neither bf16 nor grouped K/V: never timed there
    # which steps take what (build.json), the grid order with its numbers, the correctness counts
    assert ("`ftz_exp2` takes fp16 and bf16 with any number of K/V heads that divides the query heads" in text
            and "`small_grid_tiles` takes fp16 with as many K/V heads as query heads" in text)
    # Llama-3-8B at S = 2048 on 128-row tiles: 16 query tiles x 4 query heads a K/V head = 64 work tiles, 0.48 of
    # a round on 132 SMs; Falcon at S = 8192 on 64-row tiles: 128 x 71 = 9088, 68.85 rounds
    assert "| Llama-3-8B, Mistral-7B | (4, 32, 2048, 128, causal, kv8, bf16) | ftz_exp2 | 128 | 4 | 64 | 0.48 |" in text
    assert "| Falcon-7B | (1, 71, 8192, 64, causal, kv1, bf16) | ftz_exp2 | 64 | 71 | 9088 | 68.85 |" in text
    assert "| bf16 | GQA | 1 | 1 | 0 | 1 |" in text and "| fp16 | MHA | 1 | 1 | 0 | 0 |" in text
    assert (ctx.figdir / "models.png").is_file() and ctx.figs["models"] == ctx.figdir / "models.png"


def test_the_models_section_compares_the_sustained_rows_where_the_run_has_them(tmp_path):
    """Sustained at one of the two model shapes (SUSTAINED named it), the step and cuDNN alone: a sustained table of
    that shape only, a sentence naming the rows the mode timed, and the step against cuDNN there, the fastest of
    those (1 / 1.05), although sdpa_flash is a peer the burst modes time; the hot rows are as without the mode."""
    from lab.report.context import Context
    from lab.report.load import RunData
    from lab.report.sections.models import section_models

    ctx = Context.of(RunData(_models_run(tmp_path / "runs", sustained=True)), tmp_path / "reports")
    ctx.figdir.mkdir(parents=True)
    text = "\n".join(section_models(ctx))
    sus = text.split("**Median µs (TFLOP/s), sustained.**")[1].split("**Which steps take")[0]
    assert text.count("**Median µs (TFLOP/s), sustained.**") == 1 and "**Median µs (TFLOP/s), hot.**" not in sus
    assert ("Sustained (back to back at the power limit: \"Burst and sustained\"), at the one model shape the run's "
            "SUSTAINED names: `ftz_exp2` and sdpa_cudnn only, so the fastest peer below is the fastest of that one."
            in sus)
    table = [l for l in sus.split("**Against the peers, sustained.**")[0].splitlines() if l.startswith("| ")]
    assert len(table) == 3 and table[2].startswith("| Llama-3-8B, Mistral-7B | (4, 32, 2048, 128) causal | 8 | bf16 |")
    assert "sdpa_flash" not in table[0]
    row = next(l for l in sus.splitlines() if l.startswith("| Llama-3-8B, Mistral-7B | (4, 32, 2048, 128, causal, "
                                                             "kv8, bf16) | ftz_exp2"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == "sdpa_cudnn" and float(cells[4].split("×")[0]) == pytest.approx(1 / 1.05, rel=0.01)
    assert cells[5] == "—" and "Falcon-7B | (1, 71, 8192, 64, causal" not in sus
    assert ("`ftz_exp2`: at or above the fastest peer (interval's lower end above 0.99) at 0 of 1 shape × mode rows."
            in sus)
    hot = text.split("**Median µs (TFLOP/s), sustained.**")[0]
    assert ("`ftz_exp2`: at or above the fastest peer (interval's lower end above 0.99) at 3 of 3 shape × mode rows"
            in hot)


def test_a_run_with_rounds_compares_rows_round_by_round_and_names_where_the_medians_disagree(tmp_path):
    """The step sampled on through a clock step its peers stopped before: 20 of its 30 samples are
    slow, so its median is a slow one and by the medians it looks CLOCK_STEP times slower than it
    is; round by round (the 10 rounds all rows took) it is the true 1 / 0.9 over cuDNN. The report
    says so beside the cold table, and its method text explains the estimator; a run without
    rounds says neither."""
    from lab.report.context import Context
    from lab.report.load import RunData
    from lab.report.sections import section_methodology, section_models

    data = RunData(_models_run(tmp_path / "runs", clock_step=True))
    shape = MODEL_SHAPES[0]
    ci = data.speedup("ftz_exp2", "sdpa_cudnn", shape, "cold")
    assert data.by_round and ci.by_round and ci.ratio == pytest.approx(1 / 0.9, rel=0.005)
    assert ci.lo <= 1 / 0.9 <= ci.hi
    # by the medians: the step's 30 samples, 20 of them slow, have their median in the slow state
    assert data.median_ratio("ftz_exp2", "sdpa_cudnn", shape, "cold") == pytest.approx(1 / 0.9 / CLOCK_STEP, rel=0.01)
    ctx = Context.of(data, tmp_path / "reports")
    ctx.figdir.mkdir(parents=True)
    text = "\n".join(section_models(ctx))
    line = next(l for l in text.splitlines() if l.startswith("Where a speedup differs by more than 1 %"))
    assert f"{shape.tuple_label}, `ftz_exp2` over sdpa_cudnn: " in line and "by the medians" in line
    assert MODEL_SHAPES[1].tuple_label not in line  # no clock step there: the two estimators agree
    assert "compared round by round" in text and "Why round by round" in "\n".join(section_methodology(ctx))
    plain = RunData(_models_run(tmp_path / "plain"))
    pctx = Context.of(plain, tmp_path / "plain_reports")
    pctx.figdir.mkdir(parents=True)
    assert not plain.by_round and "Where a speedup differs" not in "\n".join(section_models(pctx))
    assert "Why round by round" not in "\n".join(section_methodology(pctx))


def test_the_report_renders_with_the_models_section_and_without_it_for_old_runs(tmp_path, replicated_run):
    from lab.report import render

    md = render.write(_models_run(tmp_path / "runs"), tmp_path / "reports").read_text()
    assert "## The attention real models run" in md and "![TFLOP/s per model shape" in md
    assert "The attention real models run" in (tmp_path / "reports" / "ablation.html").read_text()
    old = replicated_run(tmp_path / "old_runs", "20990106T000000Z-old")  # a run before issue 22: no model shapes
    md = render.write(old, tmp_path / "old_reports").read_text()
    assert "real models" not in md and not (tmp_path / "old_reports" / "figures" / "models.png").exists()


def test_the_grid_order_text_follows_the_runs_sm90_end(tmp_path, monkeypatch):
    """Before step 35 the sm_90a end walks a static list; from step 35 on it takes tiles from a counter
    where the launch allows it, and the report says which order and when."""
    from lab.report import branches, models
    from lab.report.load import RunData

    data = RunData(_models_run(tmp_path / "runs"))
    text = "\n".join(models.grid_order(data, MODEL_SHAPES))
    assert "The sm_90a end's persistent scheduler walks the work tiles" in text and "counter" not in text
    monkeypatch.setattr(branches, "steps", lambda d: ["longest_first_queue", "small_grid_tiles"])
    text = "\n".join(models.grid_order(data, MODEL_SHAPES))
    assert text.startswith("The sm_90a end takes its work tiles from a counter where the launch allows it")
    assert "fewer than four tiles a CTA" in text and "keeps step 27's static list, which walks the work tiles" in text


def test_the_grid_order_table_gives_no_tile_for_a_d64_call_whose_tile_the_shape_picks(tmp_path, monkeypatch):
    """From step 49 a D = 64 call takes 64 or 192 query rows by its shape (fa/tile_size.cuh), which the build's
    one number a head dim cannot say: the table says "by shape" there and counts nothing; D = 128 keeps its count."""
    from lab.report import branches, models
    from lab.report.load import RunData

    data = RunData(_models_run(tmp_path / "runs"))
    rows = [line for line in models.grid_order(data, MODEL_SHAPES)[-1].splitlines() if "ftz_exp2" in line]
    assert [r.split(" | ")[3] for r in rows] == ["128", "64"]  # step 18: one tile a head dim
    monkeypatch.setattr(branches, "lineage", lambda name: ["baseline", "three_warpgroups_d64", name])
    lines = models.grid_order(data, MODEL_SHAPES)
    rows = [line.split(" | ") for line in lines[-3].splitlines() if "ftz_exp2" in line]
    assert [r[3] for r in rows] == ["128", "by shape"]
    assert rows[0][5] == "64" and rows[1][5] == "—"  # 2048 / 128 query tiles x 4 query heads; none counted at D = 64
    assert lines[-1].startswith('"By shape": the step\'s D = 64 tile (64 or 192 query rows)')


def test_seconds_by_scope_sums_each_replicates_notes_and_skips_an_interrupted_attempt(tmp_path):
    from lab.studies import replicates

    timing = tmp_path / "replicates" / "timing"
    (timing / "interrupted").mkdir(parents=True)
    (timing / "plan.json").write_text(json.dumps({"jobs": []}))
    (timing / "r0.json").write_text(json.dumps({"notes": [{"scope": "ladder", "seconds": 9.5},
                                                          {"scope": "models", "seconds": 2.25}]}))
    (timing / "r1.json").write_text(json.dumps({"notes": [{"scope": "ladder", "seconds": 8.5},
                                                          {"scope": "models", "seconds": 1.75},
                                                          {"scope": "models", "seconds": 1.0}]}))
    (timing / "interrupted" / "1-r1.json").write_text(json.dumps({"notes": [{"scope": "models", "seconds": 50.0}]}))
    assert replicates.seconds_by_scope(tmp_path) == {"ladder": 18.0, "models": 5.0}
    assert replicates.seconds_by_scope(tmp_path / "elsewhere") == {}


def test_the_cost_statement_of_a_run_without_the_wait_recorded_gives_the_jobs_and_no_sum():
    from types import SimpleNamespace

    from lab.report.models import cost_statement

    shape = Shape(1, 8, 2048, 128, True, 2, "bf16")
    warmup = {"shapes": [{"shape": shape.id, "seconds": 4.0, "error": ""},
                         {"shape": "B1-H8-S512-D64-full", "seconds": 9.0, "error": ""}], "seconds": 13.0}
    data = SimpleNamespace(scope_seconds={"models": 12.25}, replicates=3, flex_warmup=warmup, stages={"timing_s": 1.0})
    text = cost_statement(data, [shape])
    assert text.startswith("**What the set costs.** Its jobs took 12.2 s of the timing stage over the 3 replicates")
    assert "compiles for its shapes took 4.0 s of the background warm-up beside" in text  # no workers: one process
    assert "came to" not in text and text.endswith("(flex_warmup.json).")
    assert cost_statement(SimpleNamespace(scope_seconds={}, replicates=1, flex_warmup=None, stages={}), [shape]) == ""


def test_the_sustained_mode_has_its_own_jobs_at_its_shapes_only():
    """Sustained (issue 45): after the burst modes' jobs, one job a shape of the large set (SUSTAINED's default)
    the run has, with the headline branch's end and its parent, the SUSTAINED_PEERS only, no A/A twin, its own
    seed; the burst jobs keep hot and cold; a run without the mode has no such job, and one with it alone has only
    those."""
    from lab.kernels.shape import Shape
    from lab.studies import stages
    from lab.studies.params import RunParams
    from lab.studies.shapes import SUSTAINED_PEERS

    variants = f"{END},{PARENT},tma,portable_model_inputs,small_grid_tiles"
    p = RunParams.from_text(shapes="large,models", variants=variants, seed="5")
    kernels = list(p.variants)
    jobs = stages.timing_jobs(p, kernels)
    burst = [j for j in jobs if j.scope != "sustained"]
    sustained = [j for j in jobs if j.scope == "sustained"]
    assert all(j.modes in (["hot", "cold"], ["hot"]) for j in burst)
    large = {Shape(4, 16, 4096, D, c) for D in (64, 128) for c in (False, True)}
    assert jobs[-len(sustained):] == sustained and {j.shape for j in sustained} == large
    assert len(sustained) == 4 and not [j for j in sustained if j.shape.S != 4096]
    for j in sustained:
        assert j.modes == ["sustained"] and j.aa is None and j.peers and j.peers_only == list(SUSTAINED_PEERS)
        assert j.impls == [END, PARENT]  # the end and its parent
        assert j.seed == 5 + 2000 + p.shapes.index(j.shape) + 1
    peer = lambda n: type("P", (), {"name": n})()  # noqa: E731
    plan_peers = [peer(n) for n in ("sdpa_flash", "sdpa_efficient", "sdpa_cudnn", "sdpa_default", "flex_attention",
                                    "flash_attn3")]
    assert [q.name for q in sustained[0].peers_here(plan_peers)] == list(SUSTAINED_PEERS)
    assert not [j for j in stages.timing_jobs(RunParams.from_text(shapes="large", modes="hot,cold"), kernels)
                if j.scope == "sustained"]
    only = stages.timing_jobs(RunParams.from_text(shapes="large", modes="sustained", variants=variants), kernels)
    assert only and all(j.scope == "sustained" for j in only)


def test_sustained_names_where_the_sustained_mode_runs():
    """SUSTAINED (a shape spec) picks the run's shapes the sustained mode measures, in the run's order: the long
    and models sets added to the large one give issue 46's 20 shapes, each a job with the end and its parent; a
    spec with none of the run's shapes, typed, is refused naming both, and a bad spec names the option. A run
    recorded before the option read back measures the large set, as those runs did."""
    from lab.kernels.shape import Shape
    from lab.studies import stages
    from lab.studies.params import RunParams

    variants = f"{END},{PARENT},tma"
    p = RunParams.from_text(shapes="canonical,large,long,models", variants=variants, sustained="large,long,models")
    jobs = [j for j in stages.timing_jobs(p, list(p.variants)) if j.scope == "sustained"]
    want = ([Shape(4, 16, 4096, D, c) for D in (64, 128) for c in (False, True)]
            + [Shape(B, 16, S, 128, c) for (B, S) in ((2, 8192), (1, 16384), (16, 1024)) for c in (False, True)])
    assert [j.shape for j in jobs][:10] == want
    models = [j.shape for j in jobs][10:]
    assert len(models) == 10 and all(s.causal and s.dtype == "bf16" and s.B * s.S == 8192 for s in models)
    assert all(j.impls == [END, PARENT] for j in jobs)
    one = RunParams.from_text(shapes="large,long", variants=variants, sustained="2,16,8192,128,causal")
    assert [j.shape for j in stages.timing_jobs(one, list(one.variants)) if j.scope == "sustained"] == [
        Shape(2, 16, 8192, 128, True)]
    assert RunParams.from_text(shapes="canonical").sustained_shapes == []  # the default's shapes are not in it
    assert RunParams.from_text(shapes="large", modes="hot,cold", sustained="large").sustained_shapes == []
    with pytest.raises(ValueError, match=r"SUSTAINED='long': none of its 6 shape\(s\) is among the run's"):
        RunParams.from_text(shapes="large", sustained="long")
    with pytest.raises(ValueError, match=r"SUSTAINED='larg'"):
        RunParams.from_text(sustained="larg")
    old = RunParams.from_text(shapes="large,long").to_json()
    del old["sustained"]
    assert RunParams.from_json(old).sustained_shapes == want[:4]


def test_the_long_shapes_time_the_headline_end_beside_its_parent():
    """At the long set ("tails") a replicate times the branch ends and the headline end's parent, no earlier step
    and no knock-out; the sweep ("tails-hot") the branch ends only, hot; a ladder shape every step."""
    from lab.kernels import manifest
    from lab.studies import stages
    from lab.studies.params import RunParams

    grandparent = manifest.get(PARENT).parent
    variants = f"{END},{PARENT},{grandparent},portable_model_inputs"
    p = RunParams.from_text(shapes="long,sweep,canonical", variants=variants, modes="hot,cold")
    kernels = list(p.variants)
    jobs = {(j.shape, j.scope): j for j in stages.timing_jobs(p, kernels)}
    long_jobs = [j for (_, scope), j in jobs.items() if scope == "tails"]
    sweep_jobs = [j for (_, scope), j in jobs.items() if scope == "tails-hot"]
    assert len(long_jobs) == 6 and sweep_jobs
    for j in long_jobs:
        assert sorted(j.impls) == sorted(["portable_model_inputs", END, PARENT]) and j.modes == ["hot", "cold"]
    for j in sweep_jobs:
        assert sorted(j.impls) == sorted(["portable_model_inputs", END]) and j.modes == ["hot"]
    ladder = [j for (_, scope), j in jobs.items() if scope == "ladder"]
    assert ladder and all({END, PARENT, grandparent} <= set(j.impls) for j in ladder)
