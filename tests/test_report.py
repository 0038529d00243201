"""CPU tests of lab.report on a copy of the committed H200 run (nothing is written under data/):
the ablation table's shape and order, numbers recomputed from samples.parquet, determinism,
a self-contained HTML file, and a run with missing pieces."""

import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest

from lab.measure import records, stats
from lab import report
from lab.kernels import variants
from fixture_runs import FIXTURE_RUNS
from lab.studies import derived

RUN_ID = "20261121T232749Z-c1f7639"
HEAD = dict(B=4, H=16, S=4096, D=64, causal=False)

pytestmark = pytest.mark.skipif(not (FIXTURE_RUNS / RUN_ID).is_dir(), reason=f"run {RUN_ID} is not committed")
# The ladder as it was when that run was measured (later steps are not in it).
RUN_VARIANTS = json.loads((FIXTURE_RUNS / RUN_ID / "params.json").read_text())["variants"]
RUN_MANIFEST = [v for v in variants.manifest() if v.name in RUN_VARIANTS]


def _copy_run(dst_root):
    dst_root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(FIXTURE_RUNS / RUN_ID, dst_root / RUN_ID)
    return records.RunRecord.open(RUN_ID, dst_root)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    rec = _copy_run(root)
    out = tmp_path_factory.mktemp("reports")
    md_path = report.write(rec, out)
    return rec, out, md_path.read_text(encoding="utf-8"), (out / "ablation.html").read_text(encoding="utf-8")


def _samples(rec, impl, mode="hot", **shape):
    s = rec.read_table("samples.parquet")
    s = s[~s["throttled"].astype(bool)]
    sel = (s["impl"] == impl) & (s["mode"] == mode)
    for k, v in (shape or HEAD).items():
        sel &= s[k] == v
    return s[sel]["latency_us"].to_numpy()


def _table_after(md, marker):
    """Rows (lists of cells) of the first Markdown table after `marker`."""
    lines = md[md.index(marker):].splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("|"))
    rows = []
    for ln in lines[start + 2:]:
        if not ln.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", ln.strip()[1:-1])])
    return rows


def test_ablation_table_has_one_row_per_variant_in_ladder_order(written):
    rec = written[0]
    df = report.ablation_table(rec)
    assert list(df["variant"]) == RUN_VARIANTS
    assert list(df["step"]) == list(range(1, len(RUN_VARIANTS) + 1))
    assert df.attrs["shape"] == "(4, 16, 4096, 64) non-causal"
    assert df.attrs["profile_shape"] == "(4, 16, 4096, 64) non-causal"
    assert (df["status"] == "measured").all()
    assert df.loc[0, "hypothesis_verdict"] == "reference (no parent)"
    assert set(df["hypothesis_verdict"][1:]) <= {"confirmed", "refuted", "inconclusive", "inconclusive (no profile)"}


def test_medians_in_the_markdown_are_the_samples_medians(written):
    rec, _, md, _ = written
    rows = {r[0]: r for r in _table_after(md, "**1. Speed.**")}
    for v in RUN_MANIFEST:
        x = _samples(rec, v.name)
        assert len(x) > 0
        assert rows[str(v.index)][2] == (str(variants.get(v.parent).index) if v.parent else "—")
        assert rows[str(v.index)][3] == f"{np.median(x):.2f}", v.name
        assert rows[str(v.index)][4] == f"{stats.tflops(4, 16, 4096, 64, False, float(np.median(x))):.1f}"


def test_speedup_cis_are_stats_speedup_ci_on_the_raw_samples(written):
    rec, _, md, _ = written
    rows = {r[0]: r for r in _table_after(md, "**1. Speed.**")}
    # over the parent: wmma vs warp_specialized
    ci = stats.speedup_ci(_samples(rec, "wmma"), _samples(rec, "warp_specialized"))
    assert rows["6"][8] == f"{ci.ratio:.3f}× [{ci.lo:.3f}, {ci.hi:.3f}]"
    # over sdpa_flash
    ci = stats.speedup_ci(_samples(rec, "wmma"), _samples(rec, "sdpa_flash"))
    assert rows["6"][6] == f"{ci.ratio:.3f}× [{ci.lo:.3f}, {ci.hi:.3f}]"
    df = report.ablation_table(rec)
    assert df.loc[5, "vs_sdpa_flash_lo"] == ci.lo and df.loc[5, "vs_sdpa_flash_hi"] == ci.hi
    # a per-shape table row, cold mode
    shape = dict(B=1, H=8, S=512, D=64, causal=False)
    ci = stats.speedup_ci(_samples(rec, "padded", "cold", **shape), _samples(rec, "sdpa_flash", "cold", **shape))
    rows = {r[0]: r for r in _table_after(md, "#### (1, 8, 512, 64) non-causal")}
    assert rows["padded"][7] == f"{ci.ratio:.3f}× [{ci.lo:.3f}, {ci.hi:.3f}]"
    assert rows["padded"][5] == f"{np.median(_samples(rec, 'padded', 'cold', **shape)):.2f}"


def test_vs_parent_p_values_are_bh_corrected_across_the_ladder(written):
    rec = written[0]
    df = report.ablation_table(rec)
    raw = [stats.mann_whitney_p(_samples(rec, v.name), _samples(rec, v.parent)) for v in RUN_MANIFEST if v.parent]
    assert np.allclose(df["p_adjusted"][1:].to_numpy(dtype=float), stats.benjamini_hochberg(raw))
    assert np.allclose(df["p_value"][1:].to_numpy(dtype=float), raw)


def test_profile_columns_and_hypothesis_metric_come_from_profile_csv(written):
    rec = written[0]
    df = report.ablation_table(rec).set_index("variant")
    prof = rec.read_table("profile.csv")
    p = prof[(prof["S"] == 4096) & (prof["D"] == 64) & (prof["B"] == 4)].set_index("impl")
    assert df.loc["wmma", "tensor_pipe_pct"] == p.loc["wmma", "tensor_pipe_active"]
    assert df.loc["padded", "bank_conflict_pct"] == p.loc["padded", "bank_conflict_pct"]
    assert df.loc["wmma", "dram_gbps"] == pytest.approx(p.loc["wmma", "dram_bytes_per_s"] / 1e9)
    assert df.loc["padded", "metric_parent"] == p.loc["coalesced", "bank_conflicts"]
    assert df.loc["padded", "metric_value"] == p.loc["padded", "bank_conflicts"]


def test_hypothesis_verdict_rule():
    v = report.hypothesis_verdict
    assert v("down", 32, 16, "faster", (1.5, 4)) == "confirmed"
    assert v("down", 32, 31, "faster", (1.5, 4)) == "inconclusive"  # moved < 5 %
    assert v("down", 32, 40, "faster", (1.5, 4)) == "refuted"  # moved the other way
    assert v("up", 0.2, 20, "slower", (5, 15)) == "refuted"
    assert v("up", 0.0, 20, "faster", (5, 15)) == "confirmed"
    assert v("down", 32, 16, "within noise", (1.5, 4)) == "inconclusive"
    assert v("down", 32, 16, "within noise", (1.0, 1.05)) == "confirmed"  # range includes 1.0
    assert v("down", None, 16, "faster", (1.5, 4)) == "inconclusive (no profile)"


def test_noise_floor_and_its_range_are_reported(written):
    rec, _, md, _ = written
    nf = report.noise_floor(rec)
    assert len(nf) == 11 * 2 and set(nf["impl"]) == {"wmma__aa"}
    a = _samples(rec, "wmma__aa")
    ci = stats.speedup_ci(a, _samples(rec, "wmma"))
    row = nf[(nf["shape"] == "(4, 16, 4096, 64) non-causal") & (nf["mode"] == "hot")].iloc[0]
    assert (row["ratio"], row["lo"], row["hi"]) == (ci.ratio, ci.lo, ci.hi)
    assert f"ranges {nf['ratio'].min():.3f}× to {nf['ratio'].max():.3f}×" in md


def test_report_sections_and_computed_threats(written):
    _, out, md, _ = written
    for section in ("## Objective", "## Environment", "## Methodology", "## Ablation at", "## Per-shape results",
                    "### Canonical shapes", "### Large shapes", "## Top 3 profiler findings",
                    "## Threats to validity", "## How to reproduce"):
        assert section in md, section
    assert RUN_ID in md and "NVIDIA H200" in md and "580.159.04" in md
    assert f"make report RUN={RUN_ID}" in md and "make ablation" in md
    xval = json.loads((FIXTURE_RUNS / RUN_ID / "crossval.json").read_text())
    gaps = [c for c in xval if abs(c["ratio"] - 1) > 0.03]
    for c in gaps:
        assert f"{c['shape']}: harness/triton = {c['ratio']:.3f}" in md
    summ = derived.summary(records.RunRecord.open(RUN_ID, FIXTURE_RUNS))
    assert f"by the time cap: {(summ['stopped_by'] == 'cap').sum()}" in md
    findings = md[md.index("## Top 3 profiler findings"):md.index("## Threats")]
    assert re.search(r"^3\. ", findings, re.M) and not re.search(r"^4\. ", findings, re.M)
    for name in ("hero_tflops.png", "latency_ecdf.png", "speedup.png", "roofline.png", "warp_stalls.png"):
        assert (out / "figures" / name).stat().st_size > 10_000
        assert f"(figures/{name})" in md
    assert "no S sweep in this run" in md and not (out / "figures" / "tflops_vs_S.png").exists()


def test_html_is_one_self_contained_file(written):
    _, out, _, page = written
    assert not re.search(r"https?://", page)
    assert "<script" not in page and 'src="figures/' not in page
    # five of the run's figures, and the trials of the tuning run that chose the committed dispatch table
    # where there is one (a new branch end has none until `make tune` runs on it)
    from lab.measure.records import TUNING_DIR
    from lab.studies.tuning import dispatch
    tuning_run = dispatch.read_table().get("run_id")
    tuned = bool(tuning_run) and (TUNING_DIR / tuning_run).is_dir()
    assert page.count('src="data:image/png;base64,') == len(list((out / "figures").glob("*.png"))) == 5 + tuned
    assert (out / "figures" / "tuning_trials.png").exists() == tuned
    assert ("uses the default everywhere" in page) != tuned
    assert RUN_ID in page and "NVIDIA H200" in page and "2026-11-21T23:27:49+00:00" in page
    assert page.count("<table>") > 10
    for v in RUN_MANIFEST[1:]:
        assert f'id="diff-{v.name}"' in page
    assert '<span class="add">' in page and '<span class="del">' in page


def test_writing_twice_is_byte_identical(written, tmp_path):
    rec, out, md, page = written
    again = report.write(records.RunRecord.open(RUN_ID, rec.dir.parent), tmp_path / "again")
    assert again.read_text(encoding="utf-8") == md
    assert (tmp_path / "again" / "ablation.html").read_text(encoding="utf-8") == page
    for png in (out / "figures").glob("*.png"):
        assert (tmp_path / "again" / "figures" / png.name).read_bytes() == png.read_bytes(), png.name


def test_an_interrupted_write_leaves_the_reports_folder_untouched(written, tmp_path, monkeypatch):
    """The report, the HTML and the figures go to a temporary folder and replace the old ones only
    once all are written: a write that fails half way leaves the last report as it was."""
    from lab.report import render

    rec, out, _, _ = written
    before = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    # md, html, 5 figures of the run, the tuning run's trials where a dispatch table names one
    assert len(before) == 7 + (out / "figures" / "tuning_trials.png").exists() >= 7

    def boom(*a, **k):
        raise RuntimeError("interrupted")

    monkeypatch.setattr(render, "render_html", boom)
    with pytest.raises(RuntimeError, match="interrupted"):
        render.write(rec, out)
    assert {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}-")]  # no temporary folder left


def test_missing_profile_and_excluded_variant_are_reported(tmp_path, capsys):
    rec = _copy_run(tmp_path / "runs")
    (rec.dir / "profile.csv").unlink()
    reason = "failed 2 correctness cases, e.g. B1H1-S17-D64-full: max abs err 0.5"
    (rec.dir / "excluded.json").write_text(json.dumps({"padded": reason}))
    s = rec.read_table("samples.parquet")
    s[s["impl"] != "padded"].to_parquet(rec.dir / "samples.parquet", index=False)
    (rec.dir / "ceilings.json").write_text(json.dumps({"error": "RuntimeError: no GPU"}))
    (rec.dir / "status.json").write_text(json.dumps({"state": "running"}))

    # the CLI's default: no complete run under this root, so the latest run, labelled with its state
    assert report.default_run(tmp_path / "runs") == RUN_ID
    out = tmp_path / "reports"
    assert report.main(["--runs-root", str(tmp_path / "runs"), "--reports-dir", str(out)]) == 0
    assert "'running'" in capsys.readouterr().err
    md = (out / "OPTIMIZATION_REPORT.md").read_text(encoding="utf-8")
    page = (out / "ablation.html").read_text(encoding="utf-8")

    assert "state: running" in md
    assert "profile.csv is missing" in md
    assert "variant padded was excluded from timing: " + reason in md
    assert "ceilings.json holds no ceilings" in md
    assert "Figure not drawn: no measured ceilings" in md and "Figure not drawn: no profile data" in md
    rows = {r[0]: r for r in _table_after(md, "**1. Speed.**")}
    assert len(rows) == 6 and rows["4"][3].startswith("excluded: failed 2 correctness cases")
    df = report.ablation_table(records.RunRecord.open(RUN_ID, tmp_path / "runs")).set_index("variant")
    assert df.loc["wmma", "hypothesis_verdict"] == "inconclusive (no profile)"
    assert df.loc["warp_specialized", "hypothesis_verdict"] == "inconclusive (parent not measured)"
    assert not re.search(r"https?://", page) and "profile.csv is missing" in page
    assert not (out / "figures" / "roofline.png").exists()


def test_a_bare_run_with_an_s_sweep(tmp_path):
    """Only params.json and samples.parquet: the report says what is missing and draws the sweep."""
    from lab.studies.shapes import shape_set

    rec = records.RunRecord("20990101T000000Z-sweep00", root=tmp_path)
    shapes = [s for s in shape_set("sweep") if s.D == 64 and not s.causal]
    rec.write_json("params.json", {"variants": ["baseline", "wmma"], "modes": ["hot"], "backends": ["flash"],
                                   "shapes": [[s.B, s.H, s.S, s.D, s.causal] for s in shapes]})
    rng = np.random.default_rng(0)
    rows = []
    for s in shapes:
        for impl, us in (("baseline", 900.0), ("wmma", 60.0), ("wmma__aa", 60.0), ("sdpa_flash", 25.0)):
            base = us * s.S / 512
            for i, lat in enumerate(base * (1 + 0.01 * rng.random(20))):
                rows.append(dict(run_id=rec.run_id, impl=impl, B=s.B, H=s.H, S=s.S, D=s.D, causal=s.causal,
                                 dtype="float16", mode="hot", sample=i, latency_us=lat, sm_clock_mhz=None,
                                 throttled=False))
    rec.write_table("samples.parquet", pd.DataFrame(rows, columns=records.SAMPLE_COLUMNS))
    md = report.write(rec, tmp_path / "reports").read_text(encoding="utf-8")
    assert (tmp_path / "reports" / "figures" / "tflops_vs_S.png").stat().st_size > 10_000
    assert "(figures/tflops_vs_S.png)" in md and "### Sweep shapes" in md
    for name in ("env.json", "stops.parquet", "ceilings.json", "crossval.json"):
        assert f"{name} is missing" in md
    df = report.ablation_table(rec)
    assert list(df["variant"]) == ["baseline", "wmma"]
    assert df.attrs["shape"] == "(4, 16, 4096, 64) non-causal"  # the headline shape is in the sweep
    assert df.loc[1, "hypothesis_verdict"] == "inconclusive (parent not measured)"  # warp_specialized not run


BAR_RUN = "20261122T010322Z-fc884e1"  # the 15-step run: the last step against SDPA's bar


@pytest.mark.skipif(not (FIXTURE_RUNS / BAR_RUN).is_dir(), reason=f"run {BAR_RUN} is not committed")
def test_success_bar_rows_follow_from_the_samples():
    """The bar against the fastest SDPA backend at each shape and mode, recomputed from the samples."""
    data = report.run_data(records.RunRecord.open(BAR_RUN, FIXTURE_RUNS))
    best = "unmasked_interior"
    text = "\n".join(report.success_bar(data, best))
    backends = ("sdpa_flash", "sdpa_efficient", "sdpa_cudnn")
    met = parts = 0
    fast = {"hot": 0, "cold": 0}
    canon = [report.Shape(s.B, s.H, s.S, s.D, c) for c in (False, True) for s in report.BAR_CANONICAL]
    for sh in canon + report.BAR_LARGE:
        for mode in ("hot", "cold"):
            fastest = min(backends, key=lambda b: np.median(data.lat(b, sh, mode)))
            c = stats.speedup_ci(data.lat(best, sh, mode), data.lat(fastest, sh, mode), seed=0)
            f = stats.speedup_ci(data.lat(best, sh, mode), data.lat("sdpa_flash", sh, mode), seed=0)
            assert report.fmt_ci(c.ratio, c.lo, c.hi) in text and report.fmt_ci(f.ratio, f.lo, f.hi) in text
            parts += 1
            met += c.ratio >= 1.0 and c.lo > 0.99
            if sh in report.BAR_CANONICAL:
                fast[mode] += c.ratio >= 1.10 and c.lo > 1.05
    parts += 2
    met += sum(n >= 2 for n in fast.values())
    for sh, target in report.BAR_TFLOPS.items():  # only the ones this run measured count
        if data.lat(best, sh, "hot") is not None:
            tf = stats.tflops(sh.B, sh.H, sh.S, sh.D, sh.causal, float(np.median(data.lat(best, sh, "hot"))))
            parts += 1
            met += tf >= target
            assert f"{tf:.1f} TFLOP/s" in text
        else:
            assert f"{report.shape_label(sh)}: ≥ {target:g} TFLOP/s: not measured in this run." in text
    profile = data.profile
    for D in (64, 128):
        row = profile[(profile.impl == best) & (profile.S == 4096) & (profile.D == D)].iloc[0]
        parts += 1
        met += row.local_bytes_ld + row.local_bytes_st == 0 and row.bank_conflict_pct < 1 and row.tensor_pipe_active >= 50
    assert re.search(rf"\*\*Verdict:\*\* {met} of {parts} parts of the bar met", text), text[-2000:]
    assert "(4, 16, 512, 64) non-causal: 512 CTAs of 64 rows, 2 per SM: 1.94 waves" in text


@pytest.mark.skipif(not (FIXTURE_RUNS / BAR_RUN).is_dir(), reason=f"run {BAR_RUN} is not committed")
def test_bar_judges_the_sm90a_end_or_else_the_best_portable_step():
    data = report.run_data(records.RunRecord.open(BAR_RUN, FIXTURE_RUNS))
    assert report.bar_step(data) == "unmasked_interior"  # the last sm_90a step of that run
    # as on a GPU without sm_90a: the Hopper steps have no samples, the bar falls back to the
    # fastest portable step at the headline shape
    hopper = {v.name for v in variants.manifest() if v.arch == "sm_90a"}
    data._lat = {k: v for k, v in data._lat.items() if k[0] not in hopper}
    head = data.headline()
    portable = [v.name for v in variants.manifest() if v.arch == "portable" and v.name in data.variants]
    assert report.bar_step(data) == min(portable, key=lambda v: np.median(data.lat(v, head, "hot"))) == "async_pipeline"
    assert any("async_pipeline" in line for line in report.success_bar(data, "async_pipeline"))


JUDGED_RUN = "20261122T021511Z-38fabed"  # 18 steps; steps 16-17 change D = 128 only


@pytest.mark.skipif(not (FIXTURE_RUNS / JUDGED_RUN).is_dir(), reason=f"run {JUDGED_RUN} is not committed")
def test_a_step_with_judged_at_is_judged_at_its_own_shape():
    data = report.run_data(records.RunRecord.open(JUDGED_RUN, FIXTURE_RUNS))
    head = data.headline()
    abl = report.ablation_frame(data, head, "hot")
    hyp = report.hypothesis_rows(data, abl).set_index("variant")
    d128 = report.ablation_frame(data, (4, 16, 4096, 128, False), "hot").set_index("variant")
    for name in ("wide_kv_tiles_d128", "ping_pong_d128"):
        assert variants.get(name).judged_at == "4,16,4096,128"
        assert hyp.loc[name, "judged_at"] == "(4, 16, 4096, 128) non-causal"
        assert hyp.loc[name, "vs_parent"] == d128.loc[name, "vs_parent"]
        assert hyp.loc[name, "hypothesis_verdict"] == d128.loc[name, "hypothesis_verdict"]
        # at the D = 64 headline the step changes nothing: its row there is a different one
        assert abs(abl.set_index("variant").loc[name, "vs_parent"] - 1) < 0.01
    # every other step keeps its headline row
    others = [n for n in abl["variant"] if n not in ("wide_kv_tiles_d128", "ping_pong_d128")]
    assert (hyp.loc[others, "judged_at"] == "").all()
    assert hyp.loc[others, "vs_parent"].equals(abl.set_index("variant").loc[others, "vs_parent"])


@pytest.mark.skipif(not (FIXTURE_RUNS / JUDGED_RUN).is_dir(), reason=f"run {JUDGED_RUN} is not committed")
def test_a_causal_shape_metric_is_never_read_from_a_non_causal_launch():
    from lab.kernels.shape import Shape

    data = report.run_data(records.RunRecord.open(JUDGED_RUN, FIXTURE_RUNS))
    causal, plain = Shape(4, 16, 4096, 128, True), Shape(4, 16, 4096, 128, False)
    full = data.profile
    assert data.metric_shape_for(causal) == causal  # that run profiled every ladder shape
    # a run that profiled (4, 16, 4096, 128) non-causal only: the profile columns still have their stand-in,
    # the hypothesis metric does not
    data.profile = full[~((full["S"] == 4096) & (full["D"] == 128) & full["causal"])].reset_index(drop=True)
    assert data.profile_shape_for(causal) == plain
    assert data.metric_shape_for(causal) is None
    assert data.metric_shape_for(plain) == plain
    assert data.metric_shape_for(Shape(1, 8, 512, 64, False)) == Shape(1, 8, 512, 64, False)
    # the causal launches of two steps, profiled for a hypothesis only: read for the metric, a stand-in for nothing
    judged = full[(full["S"] == 4096) & (full["D"] == 128) & full["causal"]
                  & full["impl"].isin(["unmasked_interior", "tma_q_first"])].assign(purpose="judged")
    data.profile = pd.concat([data.profile.assign(purpose=""), judged], ignore_index=True)
    assert data.metric_shape_for(causal) == causal
    assert data.profile_shape_for(causal) == plain
    step = data.profile_row("unmasked_interior", causal)
    assert step is not None and step["causal"] and step["purpose"] == "judged"
    assert data.profile_row("baseline", causal) is None
    # the profile-wide figures and statements leave those launches out, and the threats name the shape
    assert data.judged_only_shapes() == [causal]
    assert len(data.general_profile()) == len(data.profile) - len(judged)
    from lab.report.validity import _profile_threats

    threat = next(t for t in _profile_threats(data) if t.startswith("Profiled shapes differ"))
    assert "(4, 16, 4096, 128) causal was profiled only for the steps judged there" in threat


@pytest.mark.skipif(not (FIXTURE_RUNS / JUDGED_RUN).is_dir(), reason=f"run {JUDGED_RUN} is not committed")
def test_ncu_cross_validation_counts_only_long_kernels(tmp_path):
    # the methodology's Nsight Compute paragraph alone (the rest of the report is not what this reads)
    from lab.report.context import Context
    from lab.report.sections.method import _ncu_and_profiling

    data = report.run_data(records.RunRecord.open(JUDGED_RUN, FIXTURE_RUNS))
    md = "\n".join(_ncu_and_profiling(Context(data=data, figdir=tmp_path, head=data.headline())))
    rows = _table_after(md, "Against Nsight Compute's `gpu__time_duration`")
    ratios = [(float(r[3]), float(r[4])) for r in rows]
    long_ = [x for d, x in ratios if d >= report.NCU_XVAL_MIN_US]
    short = [x for d, x in ratios if d < report.NCU_XVAL_MIN_US]
    assert long_ and short
    sentence = md[md.index("Against Nsight Compute's `gpu__time_duration`"):].split("\n")[0]
    assert f"ratios {min(long_):.3f} to {max(long_):.3f} where the kernel runs at least" in sentence
    assert f"({len(short)} pairs: {min(short):.3f} to {max(short):.3f})" in sentence


FINAL_RUN = "20261122T023222Z-793d6a3"


@pytest.mark.skipif(not (FIXTURE_RUNS / FINAL_RUN).is_dir(), reason=f"run {FINAL_RUN} is not committed")
def test_precision_summary_counts_canonical_intervals_wider_than_the_band():
    data = report.run_data(records.RunRecord.open(FINAL_RUN, FIXTURE_RUNS))
    prec = report.precision_summary(data)
    canonical = [s for s in data.measured_shapes if report.shape_group(s) == "canonical"]
    expected_total = sum(1 for s in canonical for m in data.modes for i in data.impls(s) if i != report.PEER)
    assert prec["total"] == expected_total
    assert prec["within"] + len(prec["wider"]) == prec["total"]
    for w in prec["wider"]:
        shape = next(s for s in canonical if report.shape_label(s) == w["shape"])
        a, b = _samples_of(data, w["impl"], shape, w["mode"]), _samples_of(data, report.PEER, shape, w["mode"])
        ci = stats.speedup_ci(a, b)
        assert max(ci.ratio - ci.lo, ci.hi - ci.ratio) / ci.ratio > report.PRECISION_BAND
        assert 0 <= w["near_median_pct"] <= 100


def _samples_of(data, impl, shape, mode):
    return np.asarray(data.lat(impl, shape, mode))
