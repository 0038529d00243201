"""Does it replicate? (lab.report.replication, `python -m lab replicate`, the report's section) and the
report's replicate paragraphs, on synthetic run folders of three replicates (conftest's
make_replicated_run): the true effects are set there, so which verdicts hold is known."""

import math

import numpy as np
import pytest

from lab.measure import records, stats
from lab.report import render, replication
from lab.report.context import Context
from lab.report.load import RunData
from lab.report.sections.method import section_methodology
from lab.studies.shapes import HEADLINE

A, B, C = "20990105T000000Z-a", "20990106T000000Z-b", "20990107T000000Z-c"


@pytest.fixture
def runs(tmp_path, replicated_run):
    root = tmp_path / "runs"
    a = replicated_run(root, A, gpu="NVIDIA H100 80GB HBM3", seed=1)
    b = replicated_run(root, B, gpu="NVIDIA H200", seed=2)
    # the same kernels again, except that tma_q_first now costs 4 % against its parent (156 us, not 148)
    c = replicated_run(root, C, gpu="NVIDIA H200", seed=3, medians={"tma_q_first": 156.0})
    return root, a, b, c


def test_rows_hold_where_the_kernels_behave_alike(runs):
    _, a, b, _ = runs
    tab = replication.rows(a, b)
    steps = tab[tab.kind == "step"].set_index("what")
    # every step whose parent is in the run, at the headline shape (ftz_exp2's, ping_pong_d128, is not)
    assert list(steps.index) == ["tma vs wgmma_overlap", "two_ctas_per_sm vs tma", "tma_q_first vs two_ctas_per_sm",
                                 "unmasked_interior vs tma_q_first"]
    # the true effect (conftest's medians): 200 / 160 = 1.25 for tma, inside both runs' intervals
    for col in ("a", "b"):
        assert steps.at["tma vs wgmma_overlap", col + "_lo"] < 1.25 < steps.at["tma vs wgmma_overlap", col + "_hi"]
    assert set(steps["a_verdict"]) <= {"faster", "within noise"}
    knock = tab[tab.kind == "knock-out"].set_index("what")
    assert knock.at["tma in ftz_exp2", "a"] == pytest.approx(140 / 120, rel=0.02)
    assert set(knock["a_verdict"]) == {"helps"}
    bar = tab[tab.kind == "bar"]
    assert list(bar["what"]) == ["ftz_exp2 vs sdpa_cudnn"] and bar["a"].iloc[0] == pytest.approx(125 / 120, rel=0.02)
    assert tab["holds"].all() and set(tab["same_code"]) == {"yes"}


def test_a_step_that_stops_helping_is_named(runs, capsys):
    root, a, _, c = runs
    tab = replication.rows(a, c).set_index("what")
    assert not tab.at["tma_q_first vs two_ctas_per_sm", "holds"]
    assert tab.at["tma_q_first vs two_ctas_per_sm", "b"] == pytest.approx(150 / 156, rel=0.01)
    assert tab.at["tma_q_first vs two_ctas_per_sm", "b_verdict"] == "slower"
    assert tab.drop("tma_q_first vs two_ctas_per_sm")["holds"].all()
    text = "\n".join(replication.section(a, c))
    assert "**6 of 7 verdicts hold on both**: step tma_q_first vs two_ctas_per_sm" in text
    assert "| step | tma_q_first vs two_ctas_per_sm |" in text and "| **no** |" in text
    code = replication.main(A, C, root=root)
    out = capsys.readouterr().out
    assert code == 0 and "6 of 7 verdicts hold in both runs" in out
    line = next(ln for ln in out.splitlines() if "tma_q_first vs two_ctas_per_sm" in ln)
    assert line.rstrip().endswith("DIFFERS")


def test_agreement_counts_points_inside_the_other_runs_intervals(runs):
    _, a, b, c = runs
    agr = replication.agreement(a, b)
    assert agr["ratios"] == 4 and agr["replicates"] == (3, 3)
    da, db = RunData(a), RunData(b)
    inside = np.mean([db.speedup(s, p, HEADLINE, "hot").lo <= da.speedup(s, p, HEADLINE, "hot").ratio
                      <= db.speedup(s, p, HEADLINE, "hot").hi
                      for s, p in [("tma", "wgmma_overlap"), ("two_ctas_per_sm", "tma"),
                                   ("tma_q_first", "two_ctas_per_sm"), ("unmasked_interior", "tma_q_first")]])
    assert agr["a_in_b"] == pytest.approx(inside)
    assert agr["expected_inside"] == pytest.approx(0.834, abs=0.001)  # P(|Z| < 1.96 / sqrt 2)
    assert agr["differ"] == []
    assert [d["step"] for d in replication.agreement(a, c)["differ"]] == ["tma_q_first"]


def test_the_report_gains_the_section_with_a_second_gpu_and_not_without(runs, tmp_path):
    root, a, b, c = runs
    assert replication.other_gpu_run(RunData(b)) == A  # the H100 run beside the H200 ones
    assert replication.other_gpu_run(RunData(a)) == C  # the latest of the other model
    md = render.write(b, tmp_path / "reports", base=c).read_text(encoding="utf-8")
    assert "## Does it replicate?" in md and f"(B: {C} (NVIDIA H200, 3 replicates))" in md
    alone = records.RunRecord(run_id="20990108T000000Z-x", root=tmp_path / "alone")
    import shutil

    shutil.rmtree(alone.dir)
    shutil.copytree(b.dir, alone.dir)
    ctx = Context.of(RunData(records.RunRecord.open(alone.run_id, tmp_path / "alone")), tmp_path / "r2")
    assert replication.other_gpu_run(ctx.data) is None


def test_methodology_states_the_replicates_the_split_and_the_calibration(runs, tmp_path):
    _, a, _, _ = runs
    data = RunData(a)
    assert data.replicates == 3
    text = "\n".join(section_methodology(Context.of(data, tmp_path)))
    assert "measured in 3 replicates" in text and "±0.87 % (±0.5 % × √3" in text
    assert "after at least 17 samples (⌈50 / 3⌉) in blocks of 9, or after 1.00 s (3.0 s / 3)" in text
    assert "a speedup is a ratio of such medians" in text and "with a 95 % interval over the replicates" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| (4, 16, 4096, 64) non-causal |"))
    assert row.split("|")[2].strip() == "9"  # 6 steps, the A/A twin, 2 SDPA backends (knock-outs: their section)
    assert "**Calibration (leave one replicate out).** For each of the 4 step-vs-parent ratios" in text
    assert "leaving one out needs" not in text
    # the A/A twin's interval against 1.0, counted
    assert "1 of 1 intervals contain 1.0" in text


def test_median_and_speedup_over_replicates_agree(runs):
    _, a, _, _ = runs
    data = RunData(a)
    ci = data.speedup("tma", "wgmma_overlap", HEADLINE, "hot")
    assert ci.method == "replicates" and ci.replicates == 3
    assert ci.ratio == pytest.approx(data.median("wgmma_overlap", HEADLINE, "hot") / data.median("tma", HEADLINE, "hot"))
    reps = data.reps("tma", HEADLINE, "hot")
    assert data.median("tma", HEADLINE, "hot") == pytest.approx(
        math.exp(np.mean([math.log(np.median(x)) for x in reps.values()])))
    lo, hi = data.median_ci("tma", HEADLINE, "hot")
    assert lo < data.median("tma", HEADLINE, "hot") < hi
    assert stats.speedup_ci(reps, data.reps("wgmma_overlap", HEADLINE, "hot"), seed=0) == ci
