"""CPU tests of the report's sections, one by one, on the committed run 20261122T023222Z-793d6a3 alone:
each section's numbers against statistics recomputed from samples.parquet, the first screen, the bar
against the fastest SDPA backend, peers and study impls, determinism and the atomic write."""

import json
import re
import shutil

import numpy as np
import pytest

from lab import records, stats
from lab.report import bar, hero, render
from lab.report.context import Context
from lab.report.load import RunData
from lab.report.sections import SECTIONS, section_bar, section_first_screen
from lab.run import Shape

RUN_ID = "20261122T023222Z-793d6a3"
HEAD = Shape(4, 16, 4096, 64, False)
BACKENDS = ("sdpa_flash", "sdpa_efficient", "sdpa_cudnn")
pytestmark = pytest.mark.skipif(not (records.RUNS_DIR / RUN_ID).is_dir(), reason=f"run {RUN_ID} is not committed")


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    c = Context.of(RunData(records.RunRecord.open(RUN_ID)), tmp_path_factory.mktemp("reports"))
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
    assert sentence.startswith("**At (4, 16, 4096, 64) non-causal (hot), the last step, ftz_exp2, reaches")
    assert f"{tf:.0f} TFLOP/s" in sentence and _fmt_ci(vs) in sentence and _fmt_ci(tot) in sentence
    assert "(figures/hero_tflops.png)" in text and (ctx.figdir / "hero_tflops.png").stat().st_size > 20_000
    rows = [ln for ln in text.splitlines() if re.match(r"\| \d+ ", ln)]
    assert len(rows) == 18 and rows[-1].startswith("| 18 ftz_exp2 |") and _fmt_ci(vs) in rows[-1]
    assert "vs sdpa_cudnn (fastest peer) [95% CI]" in text


def test_hero_figure_groups_the_branches_and_draws_every_peer(ctx, tmp_path):
    steps = hero.ladder(ctx.data, HEAD)
    assert [hero.branch(v) for v in steps] == ["portable"] * 8 + ["sm_90a"] * 10
    assert hero.branch_ends(ctx.data, HEAD) == ["async_pipeline", "ftz_exp2"]
    assert ctx.data.peers(HEAD) == ["sdpa_flash", "sdpa_efficient", "sdpa_cudnn", "sdpa_default"]
    assert hero.figure_hero(ctx.data, HEAD, tmp_path / "h.png") is None
    assert hero.figure_hero(ctx.data, Shape(3, 3, 333, 64, False), tmp_path / "x.png").startswith("no step")


def test_headline_section(sections):
    text = sections["headline"]
    assert text.startswith("## Headline") and "ftz_exp2" in text and "Hypotheses:" in text


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
    parts = bar.bar_verdicts(ctx.data, "ftz_exp2", rows)
    met = sum(p[1] for p in parts) + sum(p[1] for p in bar._profile_verdicts(ctx.data, "ftz_exp2")[1])
    assert f"**Verdict:** {met} of {len(parts) + 2} parts of the bar met." in text


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
    data = RunData(records.RunRecord.open(RUN_ID))
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
    assert "flashinfer (not installed)" in text and "vs flex_attention (fastest peer)" in text
    assert "~no_" not in text and "@bc64" not in text
    assert "flex_attention" not in "\n".join(section_bar(c))


def test_write_twice_gives_identical_bytes_and_an_interrupted_write_leaves_reports_untouched(tmp_path, monkeypatch):
    root = tmp_path / "runs"
    shutil.copytree(records.RUNS_DIR / RUN_ID, root / RUN_ID)
    rec = records.RunRecord.open(RUN_ID, root)
    out = tmp_path / "reports"
    render.write(rec, out)
    before = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    render.write(rec, tmp_path / "again")
    again = {p.relative_to(tmp_path / "again"): p.read_bytes() for p in sorted((tmp_path / "again").rglob("*"))
             if p.is_file()}
    assert before == again and len(before) == 8  # md, html, 5 figures of the run, the tuning run's trials

    def boom(*a, **k):
        raise RuntimeError("interrupted")

    monkeypatch.setattr(render, "render_html", boom)
    with pytest.raises(RuntimeError, match="interrupted"):
        render.write(rec, out)
    after = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again", "reports", "runs"]  # no temporary folder left
