"""CPU tests of the report's sections, one by one, on the committed run 20261122T023222Z-793d6a3 alone:
each section's numbers against statistics recomputed from samples.parquet, the first screen, the bar
against the fastest SDPA backend, peers and study impls, determinism and the atomic write."""

import json
import re

import numpy as np
import pytest

from lab.measure import records, stats
from lab.report import bar, branches, ladder, render
from lab.report.formats import fmt_g, shape_label
from lab.report.context import Context
from lab.report.load import RunData
from lab.report.sections import SECTIONS, section_bar, section_first_screen, section_headline
from lab.report.tables import ablation_frame
from lab.kernels.shape import Shape
from lab.studies.shapes import shape_set
from fixture_runs import FIXTURE_RUNS

RUN_ID = "20261122T023222Z-793d6a3"
HEAD = Shape(4, 16, 4096, 64, False)
BACKENDS = ("sdpa_flash", "sdpa_efficient", "sdpa_cudnn")
pytestmark = pytest.mark.skipif(not (FIXTURE_RUNS / RUN_ID).is_dir(), reason=f"run {RUN_ID} is not committed")


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    c = Context.of(RunData(records.RunRecord.open(RUN_ID, FIXTURE_RUNS)), tmp_path_factory.mktemp("reports"))
    c.figdir.mkdir(parents=True)
    return c


@pytest.fixture(scope="module")
def sections(ctx):
    return {f.__name__.removeprefix("section_"): "\n".join(f(ctx)) for f in SECTIONS}


def _lat(ctx, impl, shape=HEAD, mode="hot"):
    s = ctx.data.raw_samples
    s = s[~s["throttled"].astype(bool)]
    sel = ((s["impl"] == impl) & (s["B"] == shape.B) & (s["H"] == shape.H) & (s["S"] == shape.S)
           & (s["D"] == shape.D) & (s["causal"] == shape.causal) & (s["mode"] == mode))
    return s[sel]["latency_us"].to_numpy()


def _fmt_ci(c):
    return f"{c.ratio:.3f}× [{c.lo:.3f}, {c.hi:.3f}]"


def test_first_screen_sentence_is_computed_from_the_samples(ctx, sections):
    last, first = _lat(ctx, "ftz_exp2"), _lat(ctx, "baseline")
    fastest = min(BACKENDS + ("sdpa_default",), key=lambda b: np.median(_lat(ctx, b)) if b != "sdpa_default" else np.inf)
    assert fastest == "sdpa_cudnn"
    tf = stats.tflops(4, 16, 4096, 64, False, float(np.median(last)))
    vs = stats.speedup_ci(last, _lat(ctx, fastest), seed=0)
    tot = stats.speedup_ci(last, first, seed=0)
    text = sections["first_screen"]
    sentence = text.splitlines()[0]
    assert sentence.startswith("**At (4, 16, 4096, 64) non-causal (hot), ftz_exp2 (the end of the "
                               "sm_90a branch) reaches")
    assert f"{tf:.0f} TFLOP/s" in sentence and _fmt_ci(vs) in sentence and _fmt_ci(tot) in sentence
    # the fastest portable step beside it, named so (one meaning: the lowest median at the headline shape)
    portable = ["baseline", "restrict", "coalesced", "padded", "warp_specialized", "wmma", "mma_sync", "async_pipeline"]
    best_portable = min(portable, key=lambda v: np.median(_lat(ctx, v)))
    tf_p = stats.tflops(4, 16, 4096, 64, False, float(np.median(_lat(ctx, best_portable))))
    vs_p = stats.speedup_ci(_lat(ctx, best_portable), _lat(ctx, fastest), seed=0)
    assert f"; the fastest portable step, {best_portable}, reaches {tf_p:.0f} TFLOP/s" in sentence
    # the bar's verdict on the first screen, as the bar's section counts it
    verdict = next(ln for ln in section_bar(ctx) if ln.startswith("**Verdict:**"))
    met, parts = verdict.split("**Verdict:** ")[1].split(" parts")[0].split(" of ")
    assert f"**The bar: {met} of {parts} parts met**" in text
    assert f"{_fmt_ci(vs_p)} the speed of {fastest}" in sentence
    assert "(figures/hero_tflops.png)" in text and (ctx.figdir / "hero_tflops.png").stat().st_size > 20_000
    rows = [ln for ln in text.splitlines() if re.match(r"\| \d+ ", ln)]
    assert len(rows) == 18 and rows[-1].startswith("| 18 ftz_exp2 |") and _fmt_ci(vs) in rows[-1]
    assert "vs sdpa_cudnn (fastest peer) [95% CI]" in text


def test_the_first_screen_names_the_steps_of_the_tree_the_run_did_not_measure(ctx, sections):
    """The fixture run measured steps 1-18; every later step of the tree is named as not measured, so that a
    report regenerated after the ladder grew does not pass for a measurement of the newest step."""
    from types import SimpleNamespace

    from lab.kernels import manifest

    ladder = manifest.names()
    assert ctx.data.params["variants"] == ladder[:18]
    line = next(ln for ln in sections["first_screen"].splitlines() if "that the run did not measure" in ln)
    assert line.startswith(f"**Steps of this tree that the run did not measure:** {len(ladder) - 18} steps (19")
    assert branches.not_asked(SimpleNamespace(params={"variants": ladder[:-1]})) == ladder[-1:]
    assert branches.not_asked(SimpleNamespace(params={"variants": ladder})) == []
    assert branches.not_asked(SimpleNamespace(params={})) == []  # a run that names none measured the ladder of its day


def test_hero_figure_groups_the_branches_and_draws_every_peer(ctx, tmp_path):
    steps = ladder.measured_steps(ctx.data, HEAD)
    assert [ladder.branch(v) for v in steps] == ["portable"] * 8 + ["sm_90a"] * 10
    assert branches.ends(ctx.data, HEAD) == ["async_pipeline", "ftz_exp2"]
    assert ctx.data.peers(HEAD) == ["sdpa_flash", "sdpa_efficient", "sdpa_cudnn", "sdpa_default"]
    assert ladder.figure_hero(ctx.data, HEAD, tmp_path / "h.png") is None
    assert ladder.figure_hero(ctx.data, Shape(3, 3, 333, 64, False), tmp_path / "x.png").startswith("no step")


def test_headline_section(ctx, sections):
    text = sections["headline"]
    assert text.startswith("## Headline") and "Hypotheses, each step against its parent:" in text
    assert ("- Steps that ran on NVIDIA H200 (compute capability 9.0), by branch: portable: 1 baseline, 2 restrict, "
            "3 coalesced, 4 padded, 5 warp_specialized, 6 wmma, 7 mma_sync, 8 async_pipeline; sm_90a: 9 wgmma, ") in text
    assert "- All 18 steps of the run were built and timed." in text
    assert "- The end of the sm_90a branch: ftz_exp2; the fastest portable step here: async_pipeline." in text
    # the portable best beside the best: TFLOP/s, against sdpa_flash and against the fastest SDPA backend
    rows = {r.split(" | ")[0]: r for r in text.splitlines() if r.startswith(("| sm_90a", "| fastest"))}
    for role, step in (("| sm_90a branch end", "ftz_exp2"), ("| fastest portable step", "async_pipeline")):
        x = _lat(ctx, step)
        tf = stats.tflops(4, 16, 4096, 64, False, float(np.median(x)))
        flash = stats.speedup_ci(x, _lat(ctx, "sdpa_flash"), seed=0)
        cudnn = stats.speedup_ci(x, _lat(ctx, "sdpa_cudnn"), seed=0)
        assert f" | {tf:.1f} | " in rows[role] and _fmt_ci(flash) in rows[role] and _fmt_ci(cudnn) in rows[role]
    assert "vs fastest SDPA (sdpa_cudnn) [95% CI]" in text
    tot = stats.speedup_ci(_lat(ctx, "ftz_exp2"), _lat(ctx, "baseline"), seed=0)
    assert f"- Whole ladder, baseline → ftz_exp2 (along steps 1–18): {_fmt_ci(tot)}" in text


def test_bar_section_judges_against_the_fastest_backend(ctx, sections):
    text = sections["bar"]
    assert text.startswith("## Against SDPA: the bar")
    rows = bar.bar_rows(ctx.data, "ftz_exp2")
    assert len(rows) == 2 * 10  # 6 canonical + 4 large shapes, hot and cold; no long shapes in this run
    for r in rows.itertuples():
        fastest = min(BACKENDS, key=lambda b: np.median(_lat(ctx, b, r.shape, r.mode)))
        assert r.fastest == fastest
        c = stats.speedup_ci(_lat(ctx, "ftz_exp2", r.shape, r.mode), _lat(ctx, fastest, r.shape, r.mode), seed=0)
        assert (r.ratio, r.lo, r.hi) == (c.ratio, c.lo, c.hi) and _fmt_ci(c) in text
        assert r.parity == (c.ratio >= 1.0 and c.lo > 0.99)
    tf = stats.tflops(4, 16, 4096, 128, False, float(np.median(_lat(ctx, "ftz_exp2", Shape(4, 16, 4096, 128, False)))))
    assert f"(4, 16, 4096, 128) non-causal: ≥ 600 TFLOP/s: **{'met' if tf >= 600 else 'missed'}**, {tf:.1f}" in text
    assert "(1, 16, 16384, 128) non-causal: ≥ 620 TFLOP/s: not measured in this run." in text
    # the parts of the bar counted by its rule, from the samples and profile.csv (not from the bar's
    # own verdicts): every row at parity, two of three canonical non-causal rows at 1.10x per
    # mode, the two TFLOP/s targets measured, the profile at the two large non-causal shapes
    met, fast = 0, {"hot": 0, "cold": 0}
    for r in rows.itertuples():
        fastest = min(BACKENDS, key=lambda b: np.median(_lat(ctx, b, r.shape, r.mode)))
        c = stats.speedup_ci(_lat(ctx, "ftz_exp2", r.shape, r.mode), _lat(ctx, fastest, r.shape, r.mode), seed=0)
        met += c.ratio >= 1.0 and c.lo > 0.99
        fast[r.mode] += r.shape in bar.BAR_CANONICAL and c.ratio >= 1.10 and c.lo > 1.05
    met += sum(n >= 2 for n in fast.values())
    for sh, target in ((Shape(4, 16, 4096, 128, False), 600), (Shape(4, 16, 4096, 64, False), 490)):
        met += stats.tflops(sh.B, sh.H, sh.S, sh.D, False, float(np.median(_lat(ctx, "ftz_exp2", sh)))) >= target
    prof = ctx.data.profile
    for D in (64, 128):
        (p,) = prof[(prof.impl == "ftz_exp2") & (prof.B == 4) & (prof.S == 4096) & (prof.D == D)
                    & ~prof.causal.astype(bool)].itertuples()
        met += p.local_bytes_ld + p.local_bytes_st == 0 and p.bank_conflict_pct < 1 and p.tensor_pipe_active >= 50
    assert f"**Verdict:** {met} of {len(rows) + 2 + 2 + 2} parts of the bar met." in text


def test_portable_branch_end_is_judged_against_flashattention2(ctx, sections):
    end = branches.portable_end(ctx.data)
    assert end == "async_pipeline"  # this run's portable branch ends at step 8
    text = sections["bar"]
    assert "## The portable branch against FlashAttention-2" in text and f"branch's end, {end}," in text
    rows = bar.portable_bar_rows(ctx.data, end)
    assert len(rows) == 2 * 11  # 7 canonical + 4 large shapes, hot and cold
    for r in rows.itertuples():
        c = stats.speedup_ci(_lat(ctx, end, r.shape, r.mode), _lat(ctx, "sdpa_flash", r.shape, r.mode), seed=0)
        assert (r.ratio, r.lo, r.hi) == (c.ratio, c.lo, c.hi) and _fmt_ci(c) in text
        assert r.parity == (c.ratio >= 1.0 and c.lo > 0.99) and r.fast == (c.ratio >= 1.10 and c.lo > 1.05)
    assert f"{int(rows['parity'].sum())} of {len(rows)} rows" in text
    prof = ctx.data.profile_row(end, bar.PORTABLE_PROFILE_SHAPE)
    assert f"tensor pipe active {fmt_g(float(prof['tensor_pipe_active']))} % against sdpa_flash's" in text


def test_ablation_section(sections):
    text = sections["ablation"]
    assert text.startswith("## Ablation at (4, 16, 4096, 64) non-causal (hot)")
    assert "**1. Speed.**" in text and "**2. Profile**" in text and "**3. Hypotheses**" in text


def test_per_shape_section_lists_every_measured_shape(ctx, sections):
    text = sections["per_shape"]
    for s in ctx.data.measured_shapes:
        assert f"#### {s.B, s.H, s.S, s.D}".replace("#### (", "#### (") in text or str((s.B, s.H, s.S, s.D)) in text
    med = float(np.median(_lat(ctx, "sdpa_cudnn", Shape(8, 16, 512, 64, True))))
    assert f"{med:.2f}" in text and "### Noise floor (A/A)" in text


def test_sweep_section_says_why_it_is_not_drawn(sections):
    assert sections["sweep"].startswith("## TFLOP/s against sequence length")
    assert "no S sweep in this run" in sections["sweep"]


def test_profiler_section(sections):
    text = sections["profiler"]
    assert text.startswith("## Top 3 profiler findings") and re.search(r"^3\. ", text, re.M)
    assert "(figures/roofline.png)" in text and "(figures/warp_stalls.png)" in text


def test_objective_methodology_environment_sections(ctx, sections):
    assert sections["objective"].startswith("## Objective") and "18 hand-written" in sections["objective"]
    assert "**Noise floor.**" in sections["methodology"] and "**Cross-validation.**" in sections["methodology"]
    env = json.loads((ctx.data.rec.dir / "env.json").read_text())
    assert env["driver"] in sections["environment"] and RUN_ID in sections["environment"]


def test_missing_threats_reproduce_sections(ctx, sections):
    assert sections["missing"] == "" if not ctx.data.missing else sections["missing"].startswith("## What is missing")
    assert sections["threats"].startswith("## Threats to validity")
    assert f"make report RUN={RUN_ID}" in sections["reproduce"]


def test_study_impls_and_external_peers(ctx):
    """Knock-out and tuning impls stay out of the ladder; an external peer joins the peers, an absent one is named."""
    data = RunData(records.RunRecord.open(RUN_ID, FIXTURE_RUNS))
    x = data.lat("ftz_exp2", HEAD, "hot")
    data._lat[("ftz_exp2~no_ping_pong", HEAD, "hot")] = x * 1.1
    data._lat[("ftz_exp2@bc64", HEAD, "hot")] = x * 1.2
    data._lat[("flex_attention", HEAD, "hot")] = x * 0.5
    data.shape_notes = list(data.shape_notes or []) + [{"absent": {"flashinfer": "not installed"}}]
    assert "ftz_exp2~no_ping_pong" not in data.impls(HEAD) and "ftz_exp2@bc64" in data.impls(HEAD, studies=True)
    assert data.kind("ftz_exp2~no_ping_pong") == "knockout" and data.kind("ftz_exp2@bc64") == "tuning"
    assert "flex_attention" in data.peers(HEAD) and data.fastest_peer(HEAD, "hot") == "flex_attention"
    assert data.fastest_sdpa(HEAD, "hot") == "sdpa_cudnn"  # the bar stays against SDPA
    c = Context.of(data, ctx.figdir.parent / "peers")
    c.figdir.mkdir(parents=True)
    text = "\n".join(section_first_screen(c))
    assert "flashinfer, because not installed" in text and "vs flex_attention (fastest peer)" in text
    assert "~no_" not in text and "@bc64" not in text
    assert "flex_attention" not in "\n".join(section_bar(c))


PORTABLE = ["baseline", "restrict", "coalesced", "padded", "warp_specialized", "wmma", "mma_sync", "async_pipeline"]
HOPPER = ["wgmma", "producer_warpgroup", "wgmma_overlap", "tma", "two_ctas_per_sm", "tma_q_first", "unmasked_interior",
          "wide_kv_tiles_d128", "ping_pong_d128", "ftz_exp2"]


def _tree_run(factors: dict[str, float]) -> RunData:
    """The recorded run with steps 19 (portable_a) and 20 (portable_b) of the conftest tree manifest
    added: each timed as async_pipeline's samples times its factor, wherever async_pipeline was."""
    data = RunData(records.RunRecord.open(RUN_ID, FIXTURE_RUNS))
    data.params = {**data.params, "variants": [*data.params["variants"], *factors]}
    for (impl, shape, mode), x in list(data._lat.items()):
        if impl == "async_pipeline":
            for name, factor in factors.items():
                data._lat[(name, shape, mode)] = x * factor
    return data


def test_a_tree_ladder_shows_each_branch_in_its_own_order_against_its_own_parent(tree_manifest, tmp_path):
    tree_manifest()  # 19 portable_a (parent async_pipeline), 20 portable_b (parent portable_a)
    # portable_a is faster than its child portable_b: the best portable step is not the branch's end
    data = _tree_run({"portable_a": 0.8, "portable_b": 0.9})
    order = PORTABLE + ["portable_a", "portable_b"] + HOPPER
    assert data.variants == order and ladder.measured_steps(data, HEAD) == order
    abl = ablation_frame(data, HEAD, "hot").set_index("variant", drop=False)
    assert list(abl["variant"]) == order
    med = lambda v: np.median(data.lat(v, HEAD, "hot"))  # noqa: E731
    for step, parent in (("portable_a", "async_pipeline"), ("portable_b", "portable_a"), ("wgmma", "async_pipeline")):
        assert abl.loc[step, "parent"] == parent
        assert abl.loc[step, "vs_parent"] == pytest.approx(med(parent) / med(step))
    headers, rows = ladder.ladder_rows(data, abl, HEAD)
    labels = [r[0] for r in rows]
    assert labels[7:11] == ["8 async_pipeline", "19 portable_a", "20 portable_b", "9 wgmma"]
    assert rows[labels.index("9 wgmma")][1] == "8 async_pipeline"
    assert rows[labels.index("20 portable_b")][1] == "19 portable_a"
    # the best step is sm_90a's end, not the last step in manifest order; the portable best is the fastest
    assert branches.best_step(data) == bar.bar_step(data) == "ftz_exp2"
    assert branches.best_portable(data) == "portable_a"
    assert branches.summary(data.variants) == \
        "portable steps 1–8, 19–20, then sm_90a steps 9–18 branching off 8 async_pipeline"
    assert "; the fastest portable step, portable_a, reaches" in ladder.finding(data, HEAD)
    c = Context.of(data, tmp_path)
    c.figdir.mkdir(parents=True)
    text = "\n".join(section_headline(c))
    assert "| sm_90a branch end | 18 ftz_exp2 | sm_90a |" in text
    assert "| fastest portable step | 19 portable_a | portable |" in text
    assert "- Whole ladder, baseline → ftz_exp2 (along steps 1–18)" in text  # step 8's sm_90a child, not 19 or 20
    assert ladder.figure_hero(data, HEAD, tmp_path / "ladder.png") is None


def test_without_sm90a_samples_the_best_portable_step_is_the_best_and_the_bar_judges_it(tree_manifest, tmp_path):
    tree_manifest()
    # portable_a, step 19, is faster than its child portable_b, the last step of the manifest
    data = _tree_run({"portable_a": 0.8, "portable_b": 0.9})
    # as on an sm_89 GPU: the sm_90a steps were refused by the build, so they have no samples
    for name in HOPPER:
        data.build[name] = {"name": name, "ok": False,
                            "error": f"not built: {name} needs sm_90a (arch-specific), this GPU is sm_89"}
    data._lat = {k: x for k, x in data._lat.items() if k[0].removesuffix("__aa") not in HOPPER}
    data.env = {**data.env, "gpu": "NVIDIA L4", "compute_capability": "8.9"}
    assert branches.ran(data) == PORTABLE + ["portable_a", "portable_b"]
    assert branches.best_step(data) == branches.best_portable(data) == bar.bar_step(data) == "portable_a"
    assert branches.role(data, "portable_a") == "the fastest portable step; no sm_90a step ran on this GPU"
    c = Context.of(data, tmp_path)
    c.figdir.mkdir(parents=True)
    head = "\n".join(section_headline(c))
    assert ("- Steps that ran on NVIDIA L4 (compute capability 8.9), by branch: portable: 1 baseline, 2 restrict, "
            "3 coalesced, 4 padded, 5 warp_specialized, 6 wmma, 7 mma_sync, 8 async_pipeline, 19 portable_a, "
            "20 portable_b.") in head
    assert ("- Steps that did not run: 9 wgmma, 10 producer_warpgroup, 11 wgmma_overlap, 12 tma, 13 two_ctas_per_sm, "
            "14 tma_q_first, 15 unmasked_interior, 16 wide_kv_tiles_d128, 17 ping_pong_d128, 18 ftz_exp2 (not built: "
            "the step needs sm_90a (arch-specific), this GPU is sm_89).") in head
    assert "| fastest portable step | 19 portable_a | portable |" in head
    assert "- Whole ladder, baseline → portable_a (along steps 1–8, 19)" in head
    sentence = ladder.finding(data, HEAD)
    assert sentence.startswith("At (4, 16, 4096, 64) non-causal (hot), portable_a (the fastest portable "
                               "step; no sm_90a step ran on this GPU) reaches")
    assert "the fastest portable step, " not in sentence.split("reaches")[1]  # said once, not twice
    text = "\n".join(section_bar(c))
    assert "The bar the study set itself: portable_a (the fastest portable step; no sm_90a step ran on this GPU)" in text
    assert "| portable_a µs |" in text and "ftz_exp2" not in text


def test_threats_name_the_kernel_files_changed_since_the_run_built_them():
    # a run's build.json records each file's hash (lab.kernels.build.source_files); the report names
    # the files whose hash the tree no longer has, and names none for runs recorded before the hashes
    from types import SimpleNamespace

    from lab.kernels import build, variants
    from lab.report.provenance import changed_files, source_check

    now = {name: build.source_files(variants.get(name)) for name in ("baseline", "restrict")}
    header = next(f for f in now["baseline"] if f.startswith("include/"))  # a header both include
    assert header in now["restrict"]
    recorded = {name: dict(files, **{header: "0" * 64}) for name, files in now.items()}
    data = SimpleNamespace(variants=["baseline", "restrict"], build={
        name: {"source_hash": "not what the tree hashes to", "source_files": recorded[name]} for name in now})
    assert source_check(data) == ([], ["baseline", "restrict"])
    assert changed_files(data, ["baseline", "restrict"]) == [header]
    unchanged = SimpleNamespace(variants=data.variants, build={n: {"source_files": now[n]} for n in now})
    assert changed_files(unchanged, ["baseline", "restrict"]) == []
    before = SimpleNamespace(variants=data.variants, build={n: {"source_hash": "x"} for n in now})
    assert changed_files(before, ["baseline", "restrict"]) == []
    # a file the tree no longer includes, or one it newly includes, is a change too
    gone = SimpleNamespace(variants=["baseline"], build={"baseline": {"source_files": {**now["baseline"],
                                                                                   "include/fa/old.cuh": "1" * 64}}})
    assert changed_files(gone, ["baseline"]) == ["include/fa/old.cuh"]


def test_the_decode_section_names_the_decode_steps_changed_since_the_run_built_them():
    # decode.json records each decode step's build as build.json does a prefill step's; a step whose
    # sources no longer hash as recorded is named with its changed file, and none is named where all match
    from lab.kernels import build, variants
    from lab.report.sections.decode import sources_changed

    steps = ["decode_group_cta", "split_kv"]
    now = {n: build.source_files(variants.get(n)) for n in steps}
    hashes = {n: build.source_hash(variants.get(n)) for n in steps}
    same = {"steps": steps, "builds": {n: {"source_hash": hashes[n], "source_files": now[n]} for n in steps}}
    assert sources_changed(same) == ""
    step_file = next(f for f in now["split_kv"] if f.startswith("variants/"))
    changed = {"steps": steps, "builds": {**same["builds"], "split_kv": {
        "source_hash": "0" * 64, "source_files": {**now["split_kv"], step_file: "0" * 64}}}}
    text = sources_changed(changed)
    assert text.startswith("The sources of 1 of the 2 decode steps") and "(split_kv)" in text
    assert f"`kernels/{step_file}`" in text and "decode_group_cta" not in text
    assert sources_changed({"steps": steps, "builds": {}}) == ""  # a run that recorded no builds: nothing said


def test_the_threat_on_what_the_intervals_cover_follows_the_replicates_and_the_base_run():
    from types import SimpleNamespace

    from lab.report.validity import scope_of_the_intervals

    def run(replicates):
        return SimpleNamespace(run_params=SimpleNamespace(replicates=replicates))

    env = {"gpu": "NVIDIA H100"}
    base = SimpleNamespace(run_id="20990101T000000Z-abc1234", env={"gpu": "NVIDIA H200"})
    three = scope_of_the_intervals(run(3), env, base)
    assert "one run in 3 replicate processes" in three and "one process" not in three
    assert "`20990101T000000Z-abc1234`, NVIDIA H200" in three and "Does it replicate?" in three
    one = scope_of_the_intervals(run(1), env)
    assert "one run, one process" in one and "make replicate" in one and "Does it replicate?" not in one


def test_the_environment_names_each_peers_source_where_the_run_recorded_it(tmp_path):
    """peers.json's `source` (issue 45: torch's version, a package's, a library and its hash) is a row of the
    environment table per peer; runs recorded before it have none and get no such row."""
    import json
    import shutil

    from lab.report.sections.front import section_environment

    shutil.copytree(FIXTURE_RUNS / RUN_ID, tmp_path / RUN_ID)
    rec = records.RunRecord.open(RUN_ID, tmp_path)
    assert not [ln for ln in section_environment(Context.of(RunData(rec), tmp_path / "r")) if "| peer " in ln]
    peers = json.loads(rec.path("peers.json").read_text()) if rec.has("peers.json") else {}
    peers.update(sdpa_cudnn={"available": True, "reason": "", "source": "torch 2.11.0"},
                 flash_attn3={"available": True, "reason": "", "source": "dew-flash-attn-cu13 0.3.6 (lib sha256 ed43...)"})
    rec.path("peers.json").write_text(json.dumps(peers))
    lines = section_environment(Context.of(RunData(rec), tmp_path / "r"))
    assert any("| peer sdpa_cudnn | torch 2.11.0 |" in ln for ln in lines)
    assert any("| peer flash_attn3 | dew-flash-attn-cu13 0.3.6 (lib sha256 ed43...) |" in ln for ln in lines)


@pytest.mark.parametrize("recorded, plain", [
    ("flash-attn-4 not importable (flash_attn.cute.flash_attn_func): ModuleNotFoundError: No module named 'flash_attn'",
     "the flash-attn-4 package is not installed"),
    ("flashinfer-python not importable (flashinfer.single_prefill_with_kv_cache): ImportError: libcuda.so.1: cannot "
     "open shared object file", "the flashinfer-python package is installed but does not import (ImportError: "
     "libcuda.so.1: cannot open shared object file)"),
    ("flash-attn-3 present but unusable (x): RuntimeError: needs sm_90", "flash-attn-3 present but unusable (x): "
     "RuntimeError: needs sm_90"),  # another form: kept as recorded
])
def test_an_absent_peer_is_said_in_plain_words(recorded, plain):
    from lab.report.load import absent_reason_plain

    assert absent_reason_plain(recorded) == plain


def test_capped_rows_threat_names_only_rows_wider_than_the_target_grouped_by_shape():
    from lab.report.tables import CappedRow
    from lab.report.validity import _capped_threat
    a, b, c = "(1, 2, 3, 64) causal", "(4, 5, 6, 128)", "(7, 8, 9, 64)"
    rows = [CappedRow("a", a, "cold", 10, 0.05), CappedRow("b", a, "cold", 11, 0.02),
            CappedRow("c", a, "cold", 12, 0.03), CappedRow("d", b, "hot", 13, 0.012),
            CappedRow("e", b, "hot", 14, 0.009), CappedRow("f", c, "cold", 15, 0.001),
            CappedRow("g", c, "hot", 0, None)]
    text = _capped_threat(rows, 0.009)  # a row exactly at the target is not wider than it
    assert text.startswith("7 row(s) hit the time cap before the CI rule stopped them")
    assert "4 of them have a median CI half-width wider than the ±0.9 % target: " in text
    assert f"3 at {a} cold (2.00-5.00 %); d at {b} hot (n=13, median CI half-width 1.20 %)." in text
    assert not any(f"{x} at" in text for x in "efg")
    narrow = _capped_threat(rows[4:], 0.009)
    assert narrow.endswith("none has a median CI half-width wider than the ±0.9 % target.")


def test_methodology_lists_every_capped_row_widest_first(ctx, sections):
    from lab.report.tables import capped_rows
    summ = ctx.data.summary
    capped = summ[summ["stopped_by"] == "cap"]
    method = sections["methodology"]
    table = method[method.index("| implementation | shape | mode | samples | median CI half-width (%) |"):]
    body = table.splitlines()[2:]
    lines = body[:next((i for i, l in enumerate(body) if not l.startswith("| ")), len(body))]
    assert len(lines) == len(capped) > 0
    widths = [float(l.rstrip(" |").rsplit("| ", 1)[1]) for l in lines]
    assert widths == sorted(widths, reverse=True)
    assert {l.split(" | ")[0][2:] for l in lines} == set(capped["impl"])
    assert [c.impl for c in capped_rows(ctx.data)][0] == lines[0].split(" | ")[0][2:]


def test_the_flashattention3_section_is_absent_without_it(ctx, sections):
    """The fixture run has no flash_attn3: no section, no first-screen line (its absence is for "Not measured")."""
    assert sections["reference"] == "" and "Against FlashAttention-3" not in sections["first_screen"]


def test_the_reference_section_reads_its_rows_from_the_samples(ctx, monkeypatch):
    """The section's machinery on a peer the fixture has (sdpa_cudnn standing in for flash_attn3): every row's
    interval is stats.speedup_ci of the two rows' samples, and the count is the bar's parity rule over them."""
    from lab.report.sections import reference
    monkeypatch.setattr(reference, "REFERENCE", "sdpa_cudnn")
    end = branches.arch_specific_end(ctx.data)
    lines = reference.section_reference(ctx)
    assert lines[0] == "## Against FlashAttention-3"
    table = [ln for ln in "\n".join(lines).splitlines() if ln.startswith("| (")]
    expected, parity = [], 0
    for name in reference.REFERENCE_SETS:
        for sh in shape_set(name):
            for mode in ("hot", "cold"):
                a, b = _lat(ctx, end, sh, mode), _lat(ctx, "sdpa_cudnn", sh, mode)
                if len(a) and len(b):
                    c = stats.speedup_ci(a, b, seed=0)
                    expected.append((sh, mode, _fmt_ci(c)))
                    parity += c.ratio >= 1.0 and c.lo > 0.99
    assert expected and len(table) == len(expected)
    for row, (sh, mode, ci) in zip(table, expected):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert (cells[0], cells[1], cells[4]) == (shape_label(sh), mode, ci)
    assert f"At parity or above: {parity} of {len(expected)} rows" in "\n".join(lines)
