"""Knock-outs on the CPU: switch validation, SASS identity, configurations, the factorial, the report section."""

import itertools
import shutil

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from lab.studies import factorial, stages
from lab.studies.params import RunParams
from lab.studies.shapes import HEADLINE, HEADLINE_CANONICAL, HEADLINE_D128
from lab.report import knockouts
from lab.measure import records
from lab.kernels import switches as sw, variants

from tests.ladder import SM90_END as END  # the sm_90a branch's last step


def _switch(**kw):
    base = dict(name="ftz_exp2", introduced_by="ftz_exp2", kernel=END, defines={"FA_FTZ_EXP2": 0},
                off="exp2f", depends_on=(), applies_to="all")
    return sw.Switch(**{**base, **kw})


def test_manifest_switches_load_and_expand_dependencies():
    switches, structural = sw.load()
    kos = {k.impl: k for k in sw.knockouts(END, switches)}
    assert len(kos) == 38 and all(i.startswith(f"{END}~no_") for i in kos)
    overlap = kos[f"{END}~no_wgmma_overlap"]
    assert overlap.off == ("wgmma_overlap", "ping_pong_d128")
    assert overlap.defines == {"FA_WGMMA_OVERLAP": 0, "FA_PING_PONG": 0}
    assert kos[f"{END}~no_two_ctas_per_sm"].applies_to == "D=64"
    assert kos[f"{END}~no_persistent"].defines == {"FA_PERSISTENT": 0, "FA_BALANCED_CAUSAL": 0,
                                                   "FA_LONGEST_FIRST_QUEUE": 0}
    assert kos[f"{END}~no_balanced_causal"].applies_to == "causal"
    assert kos[f"{END}~no_tma_store_d128"].applies_to == "D=128"
    assert kos[f"{END}~no_tma_store_d128"].defines == {"FA_TMA_STORE_D128": 0}
    assert kos[f"{END}~no_serial_d64"].applies_to == "D=64" and kos[f"{END}~no_serial_d64"].defines == {
        "FA_SERIAL_D64": 0, "FA_WIDE_KV_TILES_LONG_D64": 0, "FA_THREE_CTAS_D64": 0,
        "FA_THREE_WGS_D64": 0}  # the overlap spills in all three tiles
    assert kos[f"{END}~no_three_ctas_d64"].applies_to == "D=64"
    assert kos[f"{END}~no_three_ctas_d64"].defines == {"FA_THREE_CTAS_D64": 0}
    assert kos[f"{END}~no_tma"].defines == {"FA_TMA_KV": 0, "FA_THREE_CTAS_D64": 0,  # 120 registers: spills
                                            "FA_LONGEST_FIRST_QUEUE": 0,  # the counter's taker is the TMA thread
                                            "FA_THREE_WGS_D64": 0}  # 152 registers: spills
    assert kos[f"{END}~no_three_wgs_d64"].applies_to == "D=64"
    assert kos[f"{END}~no_three_wgs_d64"].defines == {"FA_THREE_WGS_D64": 0}
    assert kos[f"{END}~no_wide_kv_tiles_long_d64"].applies_to == "D=64"
    assert kos[f"{END}~no_wide_kv_tiles_long_d64"].defines == {"FA_WIDE_KV_TILES_LONG_D64": 0}
    assert kos[f"{END}~no_warp_release_d64"].applies_to == "D=64"
    assert kos[f"{END}~no_warp_release_d64"].defines == {"FA_WARP_RELEASE_D64": 0}
    assert kos[f"{END}~no_longest_first_queue"].applies_to == "causal"
    assert kos[f"{END}~no_longest_first_queue"].defines == {"FA_LONGEST_FIRST_QUEUE": 0}
    assert kos[f"{END}~no_heaviest_first"].applies_to == "causal"  # step 35's order, apart from its counter
    assert kos[f"{END}~no_three_wgs_causal_d64"].defines == {"FA_THREE_WGS_CAUSAL_D64": 0}
    assert kos[f"{END}~no_three_wgs_causal_d64"].applies_to == "causal"
    assert kos[f"{END}~no_three_wgs_queue_causal_d64"].defines == {"FA_THREE_WGS_QUEUE_CAUSAL_D64": 0}
    assert kos[f"{END}~no_three_wgs_queue_causal_d64"].applies_to == "causal"
    assert kos[f"{END}~no_two_stages_three_wgs_d64"].defines == {"FA_THREE_WGS_TWO_STAGES_D64": 0}
    assert kos[f"{END}~no_two_stages_three_wgs_d64"].applies_to == "D=64"
    assert kos[f"{END}~no_finite_max_d64"].defines == {"FA_FINITE_MAX_D64": 0}
    assert kos[f"{END}~no_finite_max_d64"].applies_to == "D=64"
    assert kos[f"{END}~no_queue_overlap_d64"].defines == {"FA_QUEUE_OVERLAP_D64": 0}
    assert kos[f"{END}~no_queue_overlap_d64"].applies_to == "causal"
    assert kos[f"{END}~no_one_loop_causal_short_d64"].defines == {"FA_ONE_LOOP_CAUSAL_SHORT_D64": 0}
    assert kos[f"{END}~no_one_loop_causal_short_d64"].applies_to == "causal"
    assert kos[f"{END}~no_conditional_rescale"].defines == {"FA_CONDITIONAL_RESCALE": 0}
    assert kos[f"{END}~no_conditional_rescale"].applies_to == "all"
    assert kos[f"{END}~no_rescale_under_s"].defines == {"FA_RESCALE_UNDER_S": 0}
    assert kos[f"{END}~no_rescale_under_s"].applies_to == "all"
    assert kos[f"{END}~no_counter_tile_causal_d64"].defines == {"FA_COUNTER_TILE_CAUSAL_D64": 0}
    assert kos[f"{END}~no_counter_tile_causal_d64"].applies_to == "causal"
    assert kos[f"{END}~no_mirrored_second_tile"].defines == {"FA_MIRRORED_SECOND_TILE": 0}
    assert kos[f"{END}~no_mirrored_second_tile"].applies_to == "causal"
    assert kos[f"{END}~no_fa3_sections_causal_d128"].defines == {"FA_FA3_SECTIONS_CAUSAL_D128": 0}
    assert kos[f"{END}~no_fa3_sections_causal_d128"].applies_to == "causal"
    assert kos[f"{END}~no_non_causal_kernels_d128"].defines == {"FA_NON_CAUSAL_KERNELS_D128": 0}
    assert kos[f"{END}~no_non_causal_kernels_d128"].applies_to == "D=128"
    assert kos[f"{END}~no_uniform_row0_d128"].defines == {"FA_UNIFORM_ROW0_D128": 0}
    assert kos[f"{END}~no_uniform_row0_d128"].applies_to == "D=128"
    assert kos[f"{END}~no_fa3_sections_counter_d64"].defines == {"FA_FA3_SECTIONS_COUNTER_D64": 0}
    assert kos[f"{END}~no_fa3_sections_counter_d64"].applies_to == "causal"
    assert kos[f"{END}~no_counter_tile_from_2k_d64"].defines == {"FA_COUNTER_TILE_FROM_2K_D64": 0}
    assert kos[f"{END}~no_counter_tile_from_2k_d64"].applies_to == "causal"
    assert kos[f"{END}~no_older_queue_under_8_pairs"].defines == {"FA_OLDER_QUEUE_UNDER_8_PAIRS": 0}
    assert kos[f"{END}~no_older_queue_under_8_pairs"].applies_to == "causal"
    assert kos[f"{END}~no_l2_sections"].defines == {"FA_QUEUE_L2_SECTIONS": 0}
    assert kos[f"{END}~no_unmasked_loop"].applies_to == "all"
    assert kos[f"{END}~no_unmasked_interior"].defines == {"FA_UNMASKED_INTERIOR": 0, "FA_UNMASKED_LOOP": 0}
    assert overlap.applies_to == "D=128"  # D = 64 runs in series already (step 30)
    assert not sw.knockouts("ftz_exp2", switches)  # the switches moved to the branch's end (step 30)
    assert not sw.knockouts("model_inputs", switches)
    assert len(sw.knockouts("portable_model_inputs", switches)) == 6
    assert any("restrict" in s.ideas for s in structural)
    assert sw.impl_config(f"{END}~no_wgmma_overlap") == (END, overlap.defines)
    assert sw.impl_config("wmma") == ("wmma", {})
    assert sw.parse_impl(f"{END}~no_tma+ftz_exp2") == (END, "tma+ftz_exp2")
    assert set(stages.knockout_configs(RunParams.from_json({"variants": ["wmma", END], "knockouts": True}))) == set(kos)
    assert set(stages.knockout_configs(RunParams.from_json({"variants": ["async_pipeline"], "knockouts": True}))) == {
        "async_pipeline~no_async_pipeline", "async_pipeline~no_restrict"}
    assert stages.knockout_configs(RunParams.from_json({"variants": [END], "knockouts": False})) == {}
    assert stages.knockout_configs(RunParams.from_json({"variants": ["ftz_exp2"]})) == {}  # runs recorded before knock-outs


@pytest.mark.parametrize("applies_to, D, causal, want", [
    ("all", 64, False, True), ("D=64", 64, True, True), ("D=64", 128, False, False), ("D=128", 128, False, True),
    ("causal", 64, True, True), ("causal", 128, True, True), ("causal", 64, False, False),
    ("D=128", 64, True, False)])
def test_applies_to_names_the_shapes_whose_kernel_a_switch_changes(applies_to, D, causal, want):
    assert sw.applies(applies_to, D, causal) is want


@pytest.mark.parametrize("switches, message", [
    ([_switch(kernel="nope")], "unknown kernel 'nope'"),
    ([_switch(defines={"fa_lower": 0})], "not named FA_<UPPER_CASE>"),
    ([_switch(defines={"FA_NOT_IN_SOURCE": 0})],
     "does not appear in kernels/knockouts/71_older_queue_under_8_pairs.cu"),
    ([_switch(depends_on=("ghost",))], "unknown switch 'ghost'"),
    ([_switch(name="a", depends_on=("b",)), _switch(name="b", depends_on=("a",))], "dependency cycle"),
    ([_switch(name="a", depends_on=("b",)),
      _switch(name="b", kernel="async_pipeline", defines={"FA_ASYNC_ARRIVE": 0})], "of another kernel"),
    ([_switch(applies_to="D=96")], "applies_to"),
    ([_switch(applies_to="non-causal")], "applies_to"),
    ([_switch(), _switch()], "declared twice"),
    ([_switch(host_only="yes")], "host_only must be true or false"),
])
def test_switch_validation_names_the_broken_rule(switches, message):
    with pytest.raises(ValueError, match=message):
        sw.validate(switches)


def test_manifest_text_with_unknown_field_or_unknown_knockout_is_refused():
    with pytest.raises(ValueError, match="unknown field"):
        sw.load('[[switch]]\nname="x"\nintroduced_by="tma"\nkernel="ftz_exp2"\ndefines={FA_TMA_KV=0}\n'
                'off="o"\ncolour="red"\n')
    with pytest.raises(ValueError, match="unknown switch"):
        sw.impl_config(f"{END}~no_warp_drive")


def test_structural_ideas_of_a_kernel_without_switches_are_refused():
    """A [[structural]] table left naming a former branch end (the knock-outs moved to the new end) would drop its
    ideas from the report's "Not removable" list: refused, naming the kernel."""
    switch = '[[switch]]\nname="tma"\nintroduced_by="tma"\ndefines={FA_TMA_KV=0}\noff="o"\n'
    structural = '[[structural]]\nkernel="{k}"\nideas=["wgmma"]\nreason="r"\n'
    assert sw.load(switch + structural.format(k=END))[1][0].kernel == END
    with pytest.raises(ValueError, match="kernel 'ftz_exp2' has no switch"):
        sw.load(switch + structural.format(k="ftz_exp2"))


def test_a_switch_without_a_kernel_belongs_to_the_end_of_its_introducers_branch():
    table = '[[switch]]\nname="{n}"\nintroduced_by="{i}"\ndefines={{{m}=0}}\noff="o"\n'
    text = table.format(n="tma", i="tma", m="FA_TMA_KV") + table.format(n="ftz", i="portable_ftz_exp2", m="FA_FTZ_EXP2")
    switches, _ = sw.load(text)
    assert {s.name: s.kernel for s in switches} == {"tma": END, "ftz": "portable_model_inputs"}
    named = sw.load(text.replace('introduced_by="tma"', 'introduced_by="tma"\nkernel="async_pipeline"')
                    .replace("FA_TMA_KV", "FA_ASYNC_ARRIVE"))[0]
    assert named[0].kernel == "async_pipeline"  # a table that names its kernel keeps it
    with pytest.raises(ValueError, match="'warp_drive' is not a variant"):
        sw.load(table.format(n="x", i="warp_drive", m="FA_TMA_KV"))


needs_cuobjdump = pytest.mark.skipif(shutil.which("nvcc") is None and not __import__("os").path.exists(
    "/usr/local/cuda/bin/nvcc"), reason="nvcc not installed")


@needs_cuobjdump
def test_every_knockout_changes_the_sass_and_explicit_defaults_do_not():
    switches = sw.load()[0]
    # fp16 kernels only (FA_SASS_FP16_ONLY): the bf16 ones take the same code, and the twin at its defaults is
    # compared with every kernel in test_each_switchable_twin_is_its_step_at_the_defaults
    fp16 = {"FA_SASS_FP16_ONLY": 1}
    differs = sw.sass_differences(END, switches=switches, build_defines=fp16)  # raises if any "off" equals the default
    # every switch but the launch rules of steps 63, 65, 68, 69 and 71 (host_only: their "off" builds must compile to
    # the same kernels)
    assert len(differs) == 38 and sorted(i for i, d in differs.items() if not d) == [
        f"{END}~no_counter_tile_causal_d64", f"{END}~no_counter_tile_from_2k_d64",
        f"{END}~no_fa3_sections_causal_d128", f"{END}~no_fa3_sections_counter_d64",
        f"{END}~no_older_queue_under_8_pairs"]
    assert set(sw.sass_differences("async_pipeline", switches=switches, build_defines=fp16)) == {
        "async_pipeline~no_async_pipeline", "async_pipeline~no_restrict"}
    defaults = {"FA_FTZ_EXP2": 1, "FA_PING_PONG": 1, "FA_TMA_KV": 1, "FA_TILE_WGS_D64": 1, "FA_TILE_BC_D128": 128,
                "FA_PERSISTENT": 1, "FA_BALANCED_CAUSAL": 1, "FA_SERIAL_D64": 1, "FA_WIDE_KV_TILES_LONG_D64": 1,
                "FA_THREE_CTAS_D64": 1, "FA_WARP_RELEASE_D64": 1, "FA_LONGEST_FIRST_QUEUE": 1,
                "FA_UNIFORM_DESCRIPTORS": 1, "FA_UNMASKED_LOOP": 1, "FA_THREE_WGS_D64": 1,
                "FA_PIPELINE_STATE_D128": 1, "FA_QUEUE_HEAVIEST_FIRST": 1, "FA_QUEUE_L2_SECTIONS": 1,
                "FA_THREE_WGS_CAUSAL_D64": 1, "FA_THREE_WGS_QUEUE_CAUSAL_D64": 1,
                "FA_THREE_WGS_TWO_STAGES_D64": 1, "FA_FINITE_MAX_D64": 1,
                "FA_QUEUE_OVERLAP_D64": 1, "FA_ONE_LOOP_CAUSAL_SHORT_D64": 1,
                "FA_CONDITIONAL_RESCALE": 1, "FA_RESCALE_UNDER_S": 1, "FA_COUNTER_TILE_CAUSAL_D64": 1,
                "FA_MIRRORED_SECOND_TILE": 1, "FA_FA3_SECTIONS_CAUSAL_D128": 1,
                "FA_NON_CAUSAL_KERNELS_D128": 1, "FA_UNIFORM_ROW0_D128": 1,
                "FA_FA3_SECTIONS_COUNTER_D64": 1, "FA_COUNTER_TILE_FROM_2K_D64": 1,
                "FA_OLDER_QUEUE_UNDER_8_PAIRS": 1}
    assert sw.sass(END, "sm_90a", defaults | fp16) == sw.sass(END, "sm_90a", fp16, twin=True)
    same = _switch(name="producer_warps", introduced_by="producer_warpgroup",
                   defines={"FA_TILE_PRODUCER_WARPS": 4})  # the default value: changes nothing
    with pytest.raises(ValueError, match="identical to the default"):
        sw.sass_differences(END, switches=[same], build_defines=fp16)
    mislabelled = _switch(name="rescale_under_s", introduced_by="rescale_under_s", defines={"FA_RESCALE_UNDER_S": 0},
                          host_only=True)  # step 62's switch changes the overlapped loops' code
    with pytest.raises(ValueError, match="host_only switch changes the kernels"):
        sw.sass_differences(END, switches=[mislabelled], build_defines=fp16)


@needs_cuobjdump
def test_a_switch_changes_only_the_head_dims_it_applies_to():
    """A switch declared for one head dim (applies_to "D=64" or "D=128"), with the dependencies it
    turns off, compiles every kernel of the other head dim to the same instructions: what makes it
    a null factor in the factorial at that head dim, and what the knock-out table's "applies"
    says. The comparison sees differences: each changes its own head dim's kernels."""
    per_dim = [s for s in sw.load()[0] if s.kernel == END and s.applies_to.startswith("D=")]
    assert {s.name for s in per_dim} >= {"serial_d64", "three_ctas_d64", "wide_kv_tiles_long_d64", "tma_store_d128"}
    fp16 = {"FA_SASS_FP16_ONLY": 1}  # the knock-out test's builds: compiled once for both (one worker a file)
    for s in per_dim:
        assert sw.changed_head_dims(END, s.impl, build_defines=fp16) == {int(s.applies_to[2:])}, s.name
    assert sw.changed_head_dims(END, f"{END}~no_tma", build_defines=fp16) == {64, 128}  # an "all" switch changes both


def test_kernels_are_split_by_name_and_head_dim():
    text = ("\n\tcode for sm_90a\n"
            "\t\tFunction : _ZN58_GLOBAL__N__32b0389c_25_35_x_cu_b40008eb13fwdI6__halfLi128ELb1EEEv\n"
            "  /*0000*/ MOV R1, c[0x0][0x28] ;\n"
            "\t\tFunction : _ZN58_GLOBAL__N__32b0389c_25_35_x_cu_b40008eb13fwdI6__halfLi64ELb1EEEv\n"
            "  /*0000*/    EXIT ;    /* 0x1 */\n")
    got = sw.sass_by_kernel(text)
    assert list(got) == ["_ZN_ANON_13fwdI6__halfLi128ELb1EEEv", "_ZN_ANON_13fwdI6__halfLi64ELb1EEEv"]
    assert "MOV R1" in got["_ZN_ANON_13fwdI6__halfLi128ELb1EEEv"]
    assert got["_ZN_ANON_13fwdI6__halfLi64ELb1EEEv"] == "\n /*0000*/ EXIT ; /* 0x1 */\n"  # padding as one blank
    assert [sw.head_dim(n) for n in got] == [128, 64] and sw.head_dim("_Z3fooPKv") is None


def test_file_tags_inside_template_arguments_compare_alike():
    """A decode kernel names a type of its file's anonymous namespace in its arguments (fa::<anon>::DecodeArgs),
    so its name carries the file's tag twice. The same code from two files (names of other lengths, so other
    length prefixes too) is the same kernels; another instruction is not."""
    def dump(file: str, tag: str, body: str) -> str:
        anon = f"_GLOBAL__N__{tag}_{len(file) + 3}_{file}_cu_944a8f0e"
        return (f"\t\tFunction : _ZN{len(anon)}{anon}10decode_fwdI13__nv_bfloat16Li128ELi2ELb1EEEvN2fa{len(anon)}"
                f"{anon}10DecodeArgsENS3_13SplitPartialsE14CUtensorMap_stS6_i\n  /*0000*/ {body} ;\n")
    step = dump("72_persistent_decode_ctas", "cee5d40c", "MOV R1, c[0x0][0x28]")
    twin = dump("persistent_decode_ctas_x", "0badcafe", "MOV R1, c[0x0][0x28]")
    assert sw.same_code(step, twin)
    assert list(sw.sass_by_kernel(step)) == ["_ZN_ANON_10decode_fwdI13__nv_bfloat16Li128ELi2ELb1EEEvN2fa_ANON_10"
                                             "DecodeArgsENS3_13SplitPartialsE14CUtensorMap_stS6_i"]
    assert not sw.same_code(step, dump("persistent_decode_ctas_x", "0badcafe", "MOV R2, c[0x0][0x28]"))


@needs_cuobjdump
@pytest.mark.parametrize("kernel, arch", [(END, "sm_90a"), ("portable_model_inputs", "sm_80"),
                                          ("async_pipeline", "sm_80")])
def test_each_switchable_twin_is_its_step_at_the_defaults(kernel, arch):
    """A branch end's file holds its one idea; its twin under kernels/knockouts/ adds the switches
    and must compile to the same instructions. The comparison must see a real difference: the
    twin with one switch off is not the step."""
    v = variants.get(kernel)
    assert v.twin and v.source({"FA_X": 0}) != v.path and v.source({}) == v.path
    assert sw.twin_matches_step(kernel, arch)
    one_off = next(s for s in sw.load()[0] if s.kernel == kernel and not s.depends_on and not s.host_only)
    # fp16 builds of the twin, which the knock-out test above compiles too (its cache; the twin at its
    # defaults is the step, as just asserted on every kernel)
    fp16 = {"FA_SASS_FP16_ONLY": 1}
    assert not sw.same_code(sw.sass(kernel, arch, {**fp16, **one_off.defines}), sw.sass(kernel, arch, fp16))


def test_factorial_design_skips_combinations_that_break_depends_on():
    switches = sw.load()[0]
    cells, skipped = factorial.design(END, ["wgmma_overlap", "ping_pong_d128", "tma", "ftz_exp2"], switches)
    assert len(cells) == 12 and len(skipped) == 4
    assert factorial.aliased_terms(["wgmma_overlap", "ping_pong_d128", "tma", "ftz_exp2"], switches) == [
        "wgmma_overlap:ping_pong_d128"]
    assert all(s["wgmma_overlap"] == -1 and s["ping_pong_d128"] == 1 for s in skipped)
    assert cells[0]["impl"] == END and cells[0]["defines"] == {}
    assert {c["impl"] for c in cells} >= {f"{END}~no_wgmma_overlap+ping_pong_d128+tma+ftz_exp2"}
    cells, skipped = factorial.design(END, ["wgmma_overlap", "tma", "ftz_exp2", "tma_q_first"], switches)
    assert len(cells) == 16 and not skipped
    # a dependency outside the factors goes off with the factor that needs it, and only with it
    for c in cells:
        want = {"ping_pong_d128"} if c["wgmma_overlap"] == -1 else set()
        want |= {"three_ctas_d64"} if -1 in (c["tma"], c["tma_q_first"]) else set()
        want |= {"longest_first_queue", "three_wgs_d64"} if c["tma"] == -1 else set()
        assert set(c["also_off"]) == want, c


def _synthetic(effects: dict, cells, n=150, noise=0.01, seed=0):
    """Samples with log latency = 3 + sum(coef * product of the +-1 levels) + noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for cell in cells:
        mu = 3 + sum(c * np.prod([cell[f] for f in term.split(":")]) for term, c in effects.items())
        rows += [dict(latency_us=x, **{f: cell[f] for f in "abcd"}) for x in np.exp(mu + rng.normal(0, noise, n))]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("drop", [False, True])
def test_factorial_effects_recover_known_coefficients(drop):
    truth = {"a": 0.10, "b": -0.05, "a:b": 0.03, "c:d": -0.02}
    cells = [dict(zip("abcd", lv)) for lv in itertools.product((1, -1), repeat=4)]
    if drop:  # as a depends_on rule does: "a off" needs "b off"
        cells = [c for c in cells if not (c["a"] == -1 and c["b"] == 1)]
    drop = ["a:b"] if drop else []
    if drop:
        with pytest.raises(ValueError, match="rank-deficient"):
            factorial.estimate(_synthetic(truth, cells), list("abcd"), n_boot=10)
        truth = {k: v for k, v in truth.items() if k != "a:b"}
    est = factorial.estimate(_synthetic(truth, cells), list("abcd"), n_boot=200, drop=drop).set_index("term")
    want = np.array([truth.get(t, 0.0) for t in est.index])
    lo, hi = est["coef_lo"].to_numpy(), est["coef_hi"].to_numpy()
    # ~10 correlated 95 % intervals (unbalanced when cells are skipped): a miss or two by chance,
    # none far off; the widths agree with OLS's analytic standard errors (2 x 1.96 se)
    assert np.all(np.abs(est["coef"].to_numpy() - want) <= 2 * (hi - lo)), est[["coef", "coef_lo", "coef_hi"]]
    df = _synthetic(truth, cells).assign(log_latency=lambda d: np.log(d.latency_us))
    se = smf.ols(factorial.formula(list("abcd"), drop), df).fit().bse.drop("Intercept")
    assert np.allclose((hi - lo) / (2 * 1.96 * se[est.index].to_numpy()), 1, atol=0.3)
    for term in truth:  # the true, nonzero effects are inside their intervals
        assert est.at[term, "coef_lo"] <= truth[term] <= est.at[term, "coef_hi"], term
    assert est.at["c:d", "kind"] == "interaction" and est.at["a", "ratio"] == pytest.approx(np.exp(0.2), rel=0.01)
    assert ("a:b" in est.index) != bool(drop)


def test_knockout_costs_pick_the_judged_shape_where_the_headline_does_not_apply():
    switches = sw.load()[0]
    rows = []
    for impl, med in {END: 100, f"{END}~no_tma": 130, f"{END}~no_ftz_exp2": 105,
                      f"{END}~no_ping_pong_d128": 150}.items():
        for shape in (HEADLINE, HEADLINE_D128):
            rows.append(dict(impl=impl, B=shape.B, H=shape.H, S=shape.S, D=shape.D, causal=shape.causal, mode="hot",
                             median_us=med if impl != f"{END}~no_ping_pong_d128" or shape.D == 128 else 100))
    costs = factorial.knockout_costs(pd.DataFrame(rows), END, switches)
    assert list(costs.switch) == ["ping_pong_d128", "tma", "ftz_exp2"]
    assert costs.iloc[0]["shape"] == HEADLINE_D128.astuple() and costs.iloc[0]["cost"] == pytest.approx(1.5)
    with pytest.raises(ValueError, match="needs 4 switches"):
        factorial.choose(costs)
    # ping_pong_d128 (D = 128 only) is the costliest but never a factor at the factorial's D = 64 shapes
    assert factorial.choose(costs, n=2) == ["tma", "ftz_exp2"]


def _synthetic_run(root):
    """A run folder with the last step, its knock-outs and the steps that introduced them."""
    rng = np.random.default_rng(3)
    rec = records.RunRecord(run_id="20990101T000000Z-test", root=root)
    rec.write_json("params.json", {"variants": ["wgmma_overlap", "tma", "tma_q_first", "unmasked_interior",
                                                "ftz_exp2", "ping_pong_d128"], "knockouts": True})
    medians = {"ftz_exp2": 100.0, "ping_pong_d128": 103.0,  # ftz: ladder gain 1.03
               "ftz_exp2~no_ftz_exp2": 101.0,  # knock-out cost 1.01
               "tma": 100.0, "wgmma_overlap": 200.0,  # tma: ladder gain 2.0 ...
               "ftz_exp2~no_tma": 110.0,  # ... knock-out cost 1.1: the largest disagreement
               "ftz_exp2~no_wgmma_overlap": 140.0}
    rows = []
    for (impl, med), shape in itertools.product(medians.items(), [HEADLINE, HEADLINE_CANONICAL, HEADLINE_D128]):
        for i, x in enumerate(med * rng.lognormal(0, 0.005, 60)):
            rows.append(dict(run_id=rec.run_id, impl=impl, B=shape.B, H=shape.H, S=shape.S, D=shape.D,
                             causal=shape.causal, dtype="float16", mode="hot", sample=i, latency_us=x,
                             sm_clock_mhz=1980.0, throttled=False))
    rec.write_table("samples.parquet", pd.DataFrame(rows, columns=records.SAMPLE_COLUMNS))
    prof = [dict(impl=i, B=4, H=16, S=4096, D=64, causal=False, ok=True, duration_us=d, tensor_pipe_active=t,
                 top_stalls=st) for i, d, t, st in [("ftz_exp2", 100, 60.0, "long_scoreboard:3"),
                                                     ("ftz_exp2~no_tma", 110, 52.0, "barrier:4")]]
    rec.write_table("profile.csv", pd.DataFrame(prof))
    # the factorial: its samples and its design (the effects are computed from them when read)
    cells = [dict(zip(FACTORS, lv), impl=f"cell{k}") for k, lv in enumerate(itertools.product((1, -1), repeat=4))]
    cell_rows = _synthetic({"a": 0.1}, [dict(zip("abcd", (c[f] for f in FACTORS))) for c in cells], n=40)
    impl_of = {tuple(c[f] for f in FACTORS): c["impl"] for c in cells}
    rows = [dict(run_id=rec.run_id, impl=impl_of[(r.a, r.b, r.c, r.d)], B=4, H=16, S=4096, D=64, causal=False,
                 dtype="float16", mode="hot", sample=i, latency_us=r.latency_us, sm_clock_mhz=1980.0, throttled=False,
                 replicate=0, round=i) for i, r in enumerate(cell_rows.itertuples())]
    rec.write_table("factorial.parquet", pd.DataFrame(rows, columns=records.SAMPLE_COLUMNS))
    rec.write_json("factorial.json", {"ok": True, "factors": FACTORS, "formula": factorial.formula(FACTORS),
                                      "cells": cells, "skipped": [{"reason": "a off needs b off too"}]})
    return rec


FACTORS = ["tma", "unmasked_interior", "serial_d64", "two_ctas_per_sm"]  # four switches of the sm_90a end


def test_the_interaction_table_names_the_dependencies_a_factor_carries_off():
    """A factor whose switch depends on one outside the design is measured with that one off too
    (design's also_off): the table says so for that factor only. From the cells alone: the
    dependency is off in every cell where the factor is, and only there."""
    switches = sw.load()[0]
    factors = ["tma", "unmasked_interior", "serial_d64", "ftz_exp2"]
    cells, _ = factorial.design(END, factors, switches)
    carried = knockouts.carried_dependencies({"factors": factors, "cells": cells})
    assert carried == {"tma": ["longest_first_queue", "three_ctas_d64", "three_wgs_d64"],
                       "unmasked_interior": ["unmasked_loop"],  # step 48's loop is made of the interior tiles
                       "serial_d64": ["three_ctas_d64", "three_wgs_d64", "wide_kv_tiles_long_d64"]}
    hand = [{"a": 1, "b": 1, "also_off": []}, {"a": -1, "b": 1, "also_off": ["x"]},
            {"a": 1, "b": -1, "also_off": []}, {"a": -1, "b": -1, "also_off": ["x"]}]
    assert knockouts.carried_dependencies({"factors": ["a", "b"], "cells": hand}) == {"a": ["x"]}
    assert knockouts.carried_dependencies({"factors": ["a"]}) == {}  # runs recorded before cells were kept


def test_the_knockout_table_says_what_was_off_from_the_runs_own_builds(tmp_path):
    """A knock-out's dependencies as the run built it (build.json's defines), not as the manifest
    declares them today: tma's dependency on three_ctas_d64 came with step 33, so a run recorded
    before it built ~no_tma without it. Without build.json: the manifest's."""
    rec = _synthetic_run(tmp_path / "runs")
    tab = knockouts.table(rec.dir).set_index(["switch", "shape_role"])
    # no build.json: today's manifest
    assert tab.at[("tma", "headline"), "with_off"] == "three_ctas_d64, longest_first_queue, three_wgs_d64"
    rec.write_json("build.json", {"ftz_exp2": {"defines": {}}, "ftz_exp2~no_tma": {"defines": {"FA_TMA_KV": 0}},
                                  "ftz_exp2~no_wgmma_overlap": {"defines": {"FA_WGMMA_OVERLAP": 0, "FA_PING_PONG": 0}}})
    tab = knockouts.table(rec.dir).set_index(["switch", "shape_role"])
    assert tab.at[("tma", "headline"), "with_off"] == ""
    assert tab.at[("wgmma_overlap", "headline"), "with_off"] == "ping_pong_d128"


def test_report_section_from_a_run_folder_alone(tmp_path):
    rec = _synthetic_run(tmp_path / "runs")
    text = knockouts.section(rec.dir, tmp_path / "fig")
    assert (tmp_path / "fig" / knockouts.FIGURE).stat().st_size > 0
    tab = knockouts.table(rec.dir).set_index(["switch", "shape_role"])
    assert tab.at[("tma", "headline"), "gain"] == pytest.approx(2.0, rel=0.02)
    assert tab.at[("tma", "headline"), "cost"] == pytest.approx(1.1, rel=0.02)
    assert tab.at[("tma", "headline"), "cost_lo"] < 1.1 < tab.at[("tma", "headline"), "cost_hi"]
    assert tab.at[("wgmma_overlap", "headline"), "with_off"] == "ping_pong_d128"
    assert not tab.at[("ping_pong_d128", "headline"), "applies"]
    assert "measured with ping_pong_d128 off too (dependency)" in text
    assert "restrict (step restrict, in async_pipeline)" not in text  # async_pipeline is not in this run
    assert "**tma**" in text.split("disagree most")[1].split("\n")[1]  # the largest gap comes first
    assert "tensor_pipe_active 60 with it vs 52 without" in text and "top stall long_scoreboard:3" in text
    assert "a off needs b off too" in text and "| tma | main |" in text and "| tma:unmasked_interior | interaction |" in text
    not_removable = text.split("### Not removable")[1]
    assert "restrict" in not_removable
    # the ideas the last step cannot switch off are named in the kernel this run knocked out (ftz_exp2, a run
    # from before the branch grew), not in today's end of the branch, which the run never measured
    assert "- coalesced, padded (ftz_exp2): " in not_removable and f"({END})" not in not_removable


def _open_run(root, **params):
    rec = records.RunRecord(run_id="20990102T000000Z-test", root=root)
    base = dict(variants=["wmma", END], shapes=[[4, 16, 4096, 64, False], [4, 16, 4096, 128, False]],
                modes=["hot"], cap_s=1.0, rel_ci=0.005, min_samples=50, profile=True, check="quick",
                backends=["flash"], seed=0, knockouts=True)
    rec.write_json("params.json", {**base, **params})
    rec.write_json("stages.json", {})
    return rec


def test_build_stage_adds_the_knockouts_keyed_by_impl(tmp_path, monkeypatch):
    from lab.kernels import build

    seen = {}

    def fake_build_all(names, progress=print, configs=None, **kw):
        seen.update(configs or {})
        return {n: build.BuildResult(name=n, ok=n != f"{END}~no_tma", log="boom") for n in [*names, *configs]}

    monkeypatch.setattr(build, "build_all", fake_build_all)
    rec = _open_run(tmp_path)
    stages.stage_build(rec, progress=lambda s: None)
    assert seen[f"{END}~no_wgmma_overlap"] == (END, {"FA_WGMMA_OVERLAP": 0, "FA_PING_PONG": 0})
    assert f"{END}~no_ftz_exp2" in rec.read_json("build.json")
    assert list(rec.read_json("excluded.json")) == [f"{END}~no_tma"]
    seen.clear()
    stages.stage_build(_open_run(tmp_path / "off", knockouts=False), progress=lambda s: None)
    assert seen == {}


def test_timing_times_a_knockout_only_where_its_switch_applies(tmp_path, monkeypatch):

    from lab.measure import peers, profile

    from lab.studies import replicate_child

    rec = _open_run(tmp_path)
    impls = ["wmma", END, *stages.knockout_configs(RunParams.read(rec))]
    monkeypatch.setattr(stages, "_built", lambda rec: {n: type("Built", (), {"summary": lambda self: {}})()
                                                       for n in impls})
    monkeypatch.setattr(profile, "measure_ceilings", lambda: {})
    monkeypatch.setattr(peers, "peers", lambda backends: [])
    monkeypatch.setattr(stages, "cross_validate", lambda shape, peer: {})
    monkeypatch.setattr(peers, "SdpaPeer", lambda b: None)
    calls, aa_seen = {}, []

    def fake_measure(shape, kernels, peers_, modes, rule, clocks, run_id, aa, seed, progress):
        calls[shape.D] = set(kernels)
        aa_seen.append(aa)
        return [], [], {"shape": shape.id}

    factorial_runs = []
    monkeypatch.setattr(stages, "factorial_stage", lambda rec, *a: factorial_runs.append(rec.run_id))
    stages.stage_timing(rec, progress=lambda s: None, spawn=replicate_child.in_process(fake_measure))
    assert f"{END}~no_two_ctas_per_sm" in calls[64] and f"{END}~no_two_ctas_per_sm" not in calls[128]
    assert f"{END}~no_ping_pong_d128" in calls[128] and f"{END}~no_ping_pong_d128" not in calls[64]
    assert f"{END}~no_tma" in calls[64] and f"{END}~no_tma" in calls[128]
    assert aa_seen == [END, END]  # the noise-floor copy is the last variant, not a knock-out
    assert factorial_runs == [rec.run_id] and "factorial_s" in rec.read_json("stages.json")


@pytest.mark.parametrize("decode", ["8,32,8,128,8192", ""])
def test_the_factorials_builds_go_on_beside_the_decode_set_and_are_waited_for(tmp_path, monkeypatch, decode):
    """Once the timing is recorded: with a decode set the factorial's configurations are built in a background
    process started before it, the decode set runs, then the factorial, which waits for that process first;
    without one, the factorial builds them itself (no process)."""
    from lab.studies import factorial

    rec = _open_run(tmp_path, decode=decode)
    rec.write_json("stages.json", {"timing_s": 1.0})
    events = []

    class Prebuild:
        def wait(self):
            events.append("prebuild waited")
            return 0

    monkeypatch.setattr(factorial, "start_prebuild", lambda r: events.append("prebuild started") or Prebuild())
    monkeypatch.setattr(stages, "decode_stage", lambda r, progress: events.append("decode"))
    monkeypatch.setattr(factorial, "kernel_of", lambda r: END)
    monkeypatch.setattr(factorial, "run", lambda r, kernel, progress, spawn, pool=None: events.append(
                        f"factorial {kernel}"))
    stages.stage_timing(rec, progress=lambda s: None)
    if decode:
        assert events == ["prebuild started", "decode", "prebuild waited", f"factorial {END}"]
        assert "prebuild_wait_s" in rec.read_json("stages.json")["parts"]["factorial"]
    else:
        assert events == [f"factorial {END}"]
    done = rec.read_json("stages.json")
    assert "factorial_s" in done and ("decode_s" in done) == bool(decode)


def test_the_factorial_prebuild_builds_the_configurations_the_stage_builds(tmp_path, monkeypatch):
    """prebuild (the background process's work) asks for the same configurations as the factorial's own
    build, from the same plan; a run without switches builds nothing."""
    from lab.studies import factorial

    rec = _open_run(tmp_path)
    cells = [{"impl": f"{END}@{i}", "defines": {"FA_X": i}} for i in range(3)]
    monkeypatch.setattr(factorial, "plan", lambda r, kernel: (None, ["x"], cells, [], []))
    asked = []
    monkeypatch.setattr(factorial, "build_cells", lambda kernel, cs, progress=print, arch=None: asked.append(
        (kernel, cs, arch)) or {c["impl"]: type("R", (), {"ok": c["defines"]["FA_X"] != 1})() for c in cs})
    rec.write_json("env.json", {"compute_capability": "9.0"})
    assert factorial.kernel_of(rec) == END
    assert factorial.prebuild(rec) == 2 and asked == [(END, cells, "9.0")]  # the run's GPU's, not this machine's
    assert factorial.kernel_of(_open_run(tmp_path / "off", knockouts=False)) is None
    assert factorial.prebuild(_open_run(tmp_path / "off2", knockouts=False)) == 0
    started = []
    factorial.start_prebuild(rec, popen=lambda cmd, **kw: started.append((cmd, kw["env"])))
    assert started[0][0][1:] == ["-m", "lab.studies.factorial", str(rec.dir), "--nice", str(factorial.PREBUILD_NICE)]
    assert started[0][1]["CUDA_VISIBLE_DEVICES"] == ""  # no GPU: the decode set times beside it


def test_factorial_over_replicates_covers_a_null_factor_that_one_process_does_not():
    """Three replicates whose effects each carry a replicate-level error (SD tau, as between
    processes): the null factor d (true effect 0) is inside the replicated interval in most simulated
    runs, and inside the pooled one-process interval (the replicate column dropped) in few. With one
    replicate, estimate() is the cell bootstrap as before."""
    cells = [dict(zip("abcd", lv)) for lv in itertools.product((1, -1), repeat=4)]
    truth, tau, runs = {"a": 0.10, "b": -0.05}, 0.004, 24
    hits = pooled_hits = 0
    for k in range(runs):
        rng = np.random.default_rng(100 + k)
        reps = []
        for r in range(3):
            eff = {t: c + rng.normal(0, tau) for t, c in {**truth, "d": 0.0}.items()}
            reps.append(_synthetic(eff, cells, n=12, noise=0.004, seed=1000 * k + r).assign(replicate=r))
        data = pd.concat(reps, ignore_index=True)
        est = factorial.estimate(data, list("abcd"), n_boot=25, seed=k).set_index("term")
        assert set(est["replicates"]) == {3}
        hits += est.at["d", "coef_lo"] <= 0 <= est.at["d", "coef_hi"]
        one = factorial.estimate(data.drop(columns="replicate"), list("abcd"), n_boot=25, seed=k).set_index("term")
        pooled_hits += one.at["d", "coef_lo"] <= 0 <= one.at["d", "coef_hi"]
    assert hits >= 19 and pooled_hits <= 12, (hits, pooled_hits)  # calibrated: about 23 of 24
    single = _synthetic(truth, cells, n=20)
    a = factorial.estimate(single.assign(replicate=0), list("abcd"), n_boot=20, seed=1)
    b = factorial.estimate(single, list("abcd"), n_boot=20, seed=1)
    pd.testing.assert_frame_equal(a, b)


def test_report_finds_a_switch_under_the_kernel_the_run_measured_it_on():
    """Switches move to the branch's new end when the ladder grows (step 18's to step 28, then to
    step 30): a run recorded before a move has them as ftz_exp2~no_* or model_inputs~no_*, a new
    one as <end>~no_*."""
    switches = sw.load()[0]
    assert knockouts.run_kernel(END, {END, f"{END}~no_tma"}, switches) == END
    assert knockouts.run_kernel(END, {"ftz_exp2~no_tma", "ftz_exp2~no_ftz_exp2"}, switches) == "ftz_exp2"
    assert knockouts.run_kernel(END, {"ftz_exp2", "wmma"}, switches) == END  # none measured
    # a knock-out of another kernel's switch (step 8's restrict) does not move step 28's
    assert knockouts.run_kernel(END, {"async_pipeline~no_restrict"}, switches) == END
    assert knockouts.run_kernel(END, {"ftz_exp2~no_tma", f"{END}~no_tma"}, switches) == END
    assert knockouts.run_kernel(END, {"model_inputs~no_tma", "model_inputs~no_wgmma_overlap"},
                                switches) == "model_inputs"


def _run_with(root, run_id, medians, shapes):
    """A run folder that timed `medians` (impl -> µs) at `shapes`, hot."""
    rng = np.random.default_rng(5)
    rec = records.RunRecord(run_id=run_id, root=root)
    rec.write_json("params.json", {"variants": variants.names(), "knockouts": True})
    rows = [dict(run_id=run_id, impl=impl, B=s.B, H=s.H, S=s.S, D=s.D, causal=s.causal, dtype="float16", mode="hot",
                 sample=i, latency_us=x, sm_clock_mhz=1980.0, throttled=False)
            for impl, med in medians.items() for s in shapes for i, x in enumerate(med * rng.lognormal(0, 0.002, 40))]
    rec.write_table("samples.parquet", pd.DataFrame(rows, columns=records.SAMPLE_COLUMNS))
    return rec


def test_a_knockout_counts_where_its_switch_changes_the_kernel_the_run_measured(tmp_path):
    """Step 30 runs D = 64 in series, so wgmma_overlap changes only its D = 128 kernel: a timing of
    <end>~no_wgmma_overlap at D = 64 is no knock-out cost. A run recorded on step 28 timed
    model_inputs~no_wgmma_overlap at D = 64, where it did change step 28's kernel: that cost stands
    (step 28 / knock-out = 100 / 94: the serial loop 6 % faster)."""
    shapes = [HEADLINE, HEADLINE_CANONICAL]
    new = _run_with(tmp_path / "runs", "20990101T000000Z-new", {END: 100.0, f"{END}~no_wgmma_overlap": 94.0},
                    shapes)
    tab = knockouts.table(new.dir).set_index(["switch", "shape_role"])
    assert not tab.at[("wgmma_overlap", "headline"), "applies"]
    assert np.isnan(tab.at[("wgmma_overlap", "headline"), "cost"])
    # its cost is shown at the D = 128 headline instead (judged at the headline, D = 128 only), and
    # that row is the switch's one row in the figure; not timed there, it has no cost
    assert tab.at[("wgmma_overlap", "D = 128"), "applies"] and np.isnan(tab.at[("wgmma_overlap", "D = 128"), "cost"])
    assert ("tma", "D = 128") not in tab.index and ("ping_pong_d128", "D = 128") not in tab.index  # judged at D = 128
    timed = _run_with(tmp_path / "runs", "20990101T000000Z-d128", {END: 100.0, f"{END}~no_wgmma_overlap": 110.0},
                      [HEADLINE, HEADLINE_D128])
    prim = knockouts.primary(knockouts.table(timed.dir)).set_index("switch")
    assert prim.at["wgmma_overlap", "shape_role"] == "D = 128"
    assert prim.at["wgmma_overlap", "cost"] == pytest.approx(1.10, rel=0.01)
    old = _run_with(tmp_path / "runs", "20990101T000000Z-old",
                    {"model_inputs": 100.0, "model_inputs~no_wgmma_overlap": 94.0, "model_inputs~no_tma": 200.0},
                    shapes)
    tab = knockouts.table(old.dir).set_index(["switch", "shape_role"])
    assert tab.at[("wgmma_overlap", "headline"), "kernel"] == "model_inputs"
    assert tab.at[("wgmma_overlap", "headline"), "applies"]
    assert tab.at[("wgmma_overlap", "headline"), "cost"] == pytest.approx(0.94, rel=0.01)
    # a switch the old run did not time at a shape does not apply there (ping_pong_d128: D = 128 only)
    assert not tab.at[("ping_pong_d128", "headline"), "applies"]


def test_the_build_stage_builds_the_decode_steps_beside_and_records_only_the_runs_kernels(tmp_path, monkeypatch):
    """With a decode set the build stage compiles the decode steps in the same pool (the decode set then
    loads cached builds), but build.json and excluded.json name the run's prefill kernels only; without one,
    no decode step is built."""
    from lab.kernels import build, manifest

    asked = []

    def fake_build_all(names, progress=print, configs=None, **kw):
        asked.append(list(names))
        return {n: build.BuildResult(name=n, ok=n != "split_kv", log="boom") for n in [*names, *(configs or {})]}

    monkeypatch.setattr(build, "build_all", fake_build_all)
    decode = manifest.names(problem=manifest.DECODE)
    rec = _open_run(tmp_path, knockouts=False, decode="8,32,8,128,8192")
    stages.stage_build(rec, progress=lambda s: None)
    assert asked == [["wmma", END, *decode]]
    assert list(rec.read_json("build.json")) == ["wmma", END] and rec.read_json("excluded.json") == {}
    asked.clear()
    stages.stage_build(_open_run(tmp_path / "none", knockouts=False, decode=""), progress=lambda s: None)
    assert asked == [["wmma", END]]
