"""Issue 46's targets as the report's "Against FlashAttention-3" section judges them (lab.report.sections.reference):
"at least r" is the paired speedup's point estimate at least r and its 95 % interval's lower end above r - 0.01; a
row the run did not measure is not met. The bars below are the issue's, written out here, not read from the code."""

import re

import numpy as np
import pandas as pd
import pytest

from lab.kernels.shape import Shape
from lab.measure import records
from lab.measure.stats import SpeedupCI
from lab.report.load import RunData
from lab.report.sections.reference import at_least, targets

from tests.ladder import SM90_END as END

STEP35 = "longest_first_queue"
FA3, CUDNN = "flash_attn3", "sdpa_cudnn"


def ci(ratio, lo):
    return SpeedupCI(ratio=ratio, lo=lo, hi=ratio + 0.01, method="replicates", replicates=3)


@pytest.mark.parametrize("ratio, lo, bar, met", [
    (1.000, 0.9901, 1.00, True),   # at the bar, the lower end just above 0.99
    (0.9999, 0.995, 1.00, False),  # the point estimate under the bar
    (1.010, 0.990, 1.00, False),   # the lower end at 0.99 is not above it
    (0.970, 0.9601, 0.97, True),
    (0.975, 0.960, 0.97, False),
    (1.020, 1.0101, 1.02, True),
    (1.019, 1.015, 1.02, False),
])
def test_at_least_is_the_point_and_the_lower_end(ratio, lo, bar, met):
    assert at_least(ci(ratio, lo), bar) is met


# (shape, mode) -> {impl: (true latency in us, the three replicates' factors)}. The end's speed over each base is
# the base's latency over the end's.
TIGHT = (1.0, 1.0005, 0.9995)
WIDE = (1.0, 1.03, 0.97)  # replicates 3 % apart: an interval too wide for any bar
L4096_128, L4096_64 = Shape(4, 16, 4096, 128, False), Shape(4, 16, 4096, 64, False)
C4096_128, C4096_64 = Shape(4, 16, 4096, 128, True), Shape(4, 16, 4096, 64, True)
LONG = Shape(1, 16, 16384, 128, False)
GPT2, GPT2_LONG = Shape.parse("4,12,2048,64,causal,bf16"), Shape.parse("1,12,8192,64,causal,bf16")
CANON_A, CANON_B, CANON_C = Shape(4, 16, 512, 64, False), Shape(1, 8, 512, 64, True), Shape(8, 16, 512, 64, False)
ROWS = {
    (L4096_128, "hot"): {END: (100.0, TIGHT), FA3: (100.5, TIGHT)},        # 1.005x: met
    (C4096_128, "hot"): {END: (100.0, TIGHT), FA3: (99.5, TIGHT)},         # 0.995x: missed (bar 1.00)
    (L4096_64, "hot"): {END: (100.0, WIDE), FA3: (100.3, TIGHT)},          # 1.003x but wide: missed
    (C4096_64, "hot"): {END: (100.0, TIGHT), FA3: (97.5, TIGHT)},          # 0.975x: met (bar 0.97)
    (C4096_64, "sustained"): {END: (100.0, TIGHT), FA3: (96.5, TIGHT)},    # 0.965x: missed
    (LONG, "sustained"): {END: (100.0, TIGHT), FA3: (103.0, TIGHT)},       # 1.03x: target 1 met, target 3 met
    (GPT2, "hot"): {END: (100.0, TIGHT), CUDNN: (97.5, TIGHT), FA3: (99.0, TIGHT)},  # 0.975x cuDNN, the fastest: met
    (GPT2, "sustained"): {END: (100.0, TIGHT), FA3: (96.0, TIGHT)},        # 0.96x FA3, the only one timed: missed
    (GPT2_LONG, "hot"): {END: (100.0, TIGHT), FA3: (101.0, TIGHT)},       # 1.01x: met
    (GPT2_LONG, "sustained"): {END: (100.0, TIGHT)},                       # no peer timed: not measured
    (CANON_A, "hot"): {END: (10.0, TIGHT), STEP35: (9.7, TIGHT)},          # 0.97x step 35: more than 2 % slower
    (CANON_B, "hot"): {END: (10.0, TIGHT), STEP35: (9.9, TIGHT)},          # 0.99x: within 2 %
    (CANON_C, "hot"): {END: (10.0, TIGHT), STEP35: (9.75, TIGHT)},         # 0.975x: more than 2 % slower
}


def _run(root, rows=ROWS, noise=0.0005, run_id="20990106T000000Z-t46"):
    rng = np.random.default_rng(3)
    rec = records.RunRecord(run_id, root=root)
    shapes = list(dict.fromkeys(s for s, _ in rows))
    rec.write_json("params.json", {"variants": [STEP35, END], "modes": ["hot", "sustained"], "replicates": 3,
                                   "backends": ["cudnn"], "shapes": [list(s.astuple()) for s in shapes]})
    out = []
    for (s, mode), impls in rows.items():
        for impl, (lat, factors) in impls.items():
            for r, f in enumerate(factors):
                for i in range(20):
                    out.append(dict(run_id=rec.run_id, impl=impl, B=s.B, H=s.H, S=s.S, D=s.D, causal=s.causal,
                                    H_kv=s.H_kv, dtype=s.torch_dtype_name, mode=mode, sample=i,
                                    latency_us=lat * f * np.exp(rng.normal(0, noise)), sm_clock_mhz=1980.0,
                                    throttled=False, replicate=r, round=None, power_w=None))
    rec.write_table("samples.parquet", pd.DataFrame(out, columns=records.SAMPLE_COLUMNS))
    return rec


def test_each_target_says_where_it_is_met_missed_or_not_measured(tmp_path):
    lines = targets(RunData(_run(tmp_path)), END)
    assert [ln[:12] for ln in lines] == ["- Target 1 (", "- Target 2 (", "- Target 3 (", "- Target 4 ("]
    t1, t2, t3, t4 = lines
    assert t1.startswith("- Target 1 (against flash_attn3, causal and not, hot and sustained, at least: "
                         "(4, 16, 4096, 128) 1.00×, (2, 16, 8192, 128) 1.00×, (1, 16, 16384, 128) 1.00×, "
                         "(4, 16, 4096, 64) 0.97×, (16, 16, 1024, 128) 0.97×): met at 3 of 20 rows; missed: ")
    # target 1: 20 rows (5 shapes, causal and not, hot and sustained); 3 met (the 1.005x, the 0.975x at a 0.97 bar
    # and the long sustained 1.03x), 3 missed, 14 not measured
    assert "met at 3 of 20 rows; missed: " in t1
    missed = t1.split("; missed: ")[1].split("; not measured: ")[0].split("; ")
    assert [m.split(" 0.")[0].split(" 1.")[0] for m in missed] == [
        "(4, 16, 4096, 128) causal hot", "(4, 16, 4096, 64) non-causal hot", "(4, 16, 4096, 64) causal sustained"]
    assert re.fullmatch(r"\(4, 16, 4096, 64\) causal sustained 0\.96\d× \[0\.9\d\d, 0\.9\d\d\] \(bar 0\.97\)",
                        missed[2])
    assert missed[0].endswith("(bar 1.00)")
    assert len(t1.split("; not measured: ")[1].rstrip(".").split("; ")) == 14
    # target 2: GPT-2's rows: at S = 2048 hot against cuDNN (the fastest peer hot) met at 0.97, sustained against
    # FA3 missed; at S = 8192 hot met, sustained no peer was timed
    assert re.fullmatch(r"- Target 2 \(every models row, hot and sustained, against the fastest peer the mode timed: "
                        r"at least 1\.00× at head dim 128, 0\.97× at 64\): met at 2 of 4 rows; missed: "
                        r"\(4, 12, 2048, 64, causal, bf16\) sustained against flash_attn3 0\.96\d× "
                        r"\[0\.9\d\d, 0\.9\d\d\] \(bar 0\.97\); "
                        r"not measured: \(1, 12, 8192, 64, causal, bf16\) sustained\.", t2)
    assert t3.endswith("met at 1 of 1 rows.") and "1.02×" in t3
    assert re.fullmatch(r"- Target 4 \(hot, the canonical rows at least 0\.98× the speed of step 35, "
                        r"longest_first_queue\): missed at 2 of 3 rows: "
                        r"\(4, 16, 512, 64\) non-causal 0\.9[67]\d× \[0\.9\d\d, 0\.9\d\d\]; "
                        r"\(8, 16, 512, 64\) non-causal 0\.97\d× \[0\.9\d\d, 0\.9\d\d\]\.", t4)


def test_a_run_without_the_rows_meets_nothing(tmp_path):
    """A run with only a canonical row: targets 1 and 3 not measured anywhere, target 2 without models rows."""
    lines = targets(RunData(_run(tmp_path, {(CANON_B, "hot"): ROWS[(CANON_B, "hot")]})), END)
    assert "met at 0 of 20 rows; not measured: (4, 16, 4096, 128) non-causal hot;" in lines[0]
    assert lines[1].endswith("not measured (the run has no models rows).")
    assert lines[2].endswith("met at 0 of 1 rows; not measured: (1, 16, 16384, 128) non-causal sustained.")
    assert lines[3].endswith("met at 1 of 1 rows.")
    none = targets(RunData(_run(tmp_path / "long", {(LONG, "sustained"): ROWS[(LONG, "sustained")]})), END)
    assert none[3].endswith("longest_first_queue): not measured (no canonical row of both).")


def test_a_canonical_row_exactly_2_percent_slower_than_step_35_is_within_target_4(tmp_path):
    """Target 4 says "no row more than 2 % slower": at exactly 0.98x (noiseless samples, 49 against 50 us, whose
    ratio is 0.98 to the last bit) the row meets it."""
    exact = {(CANON_A, "hot"): {END: (50.0, (1.0, 1.0, 1.0)), STEP35: (49.0, (1.0, 1.0, 1.0))}}
    assert targets(RunData(_run(tmp_path, exact, noise=0.0)), END)[3].endswith("met at 1 of 1 rows.")


def test_the_section_judges_the_targets_on_the_run_it_is_replicated_against_where_that_ran_on_another_gpu(tmp_path):
    """The issue judges its targets on an H100 and an H200: with a base run on another GPU model the section gives
    that run's targets too, under its GPU and run; a base on the same model adds nothing."""
    from lab.report.context import Context
    from lab.report.sections.reference import section_reference

    def run(root, gpu):
        rec = _run(root)
        rec.write_json("env.json", {"gpu": gpu})
        return RunData(rec)

    h200, h100, same = (run(tmp_path / n, g) for n, g in (("a", "NVIDIA H200"), ("b", "NVIDIA H100 80GB HBM3"),
                                                          ("c", "NVIDIA H200")))
    text = "\n".join(section_reference(Context.of(h200, tmp_path / "reports", base=h100)))
    assert "**Issue 46's targets on this GPU** (NVIDIA H200;" in text
    other = text.split("**On the other GPU** ")[1]
    assert other.startswith(f"(NVIDIA H100 80GB HBM3: run {h100.run_id}, the run this report is replicated "
                            f"against, its end {END}).")
    assert [ln[:12] for ln in other.splitlines() if ln.startswith("- Target")] == [
        "- Target 1 (", "- Target 2 (", "- Target 3 (", "- Target 4 ("]
    assert "met at 3 of 20 rows" in other  # the base's own rows, judged as test 1 judges them
    alone = "\n".join(section_reference(Context.of(h200, tmp_path / "reports", base=same)))
    assert "On the other GPU" not in alone and alone.count("- Target 1 (") == 1


# A companion run: hot and sustained rows other than the run's. (C4096_64, sustained) 0.975x (met
# where the run's 0.965x missed), LONG sustained 1.005x (target 1 still met, target 3 now missed at the 1.02 bar),
# GPT-2 sustained 0.98x FA3 but 0.965x cuDNN, which the run did not time there: the fastest peer is the companion's,
# so the row is missed against cuDNN (against FA3 it would be met); and a hot row the run misses (0.995x), met here.
# COMPANION_SUSTAINED is the same without that hot row: a companion of the sustained mode alone, which leaves every hot
# row the run's.
COMPANION = {
    (C4096_64, "sustained"): {END: (100.0, TIGHT), FA3: (97.5, TIGHT)},
    (LONG, "sustained"): {END: (100.0, TIGHT), FA3: (100.5, TIGHT)},
    (GPT2, "sustained"): {END: (100.0, TIGHT), FA3: (98.0, TIGHT), CUDNN: (96.5, TIGHT)},
    (C4096_128, "hot"): {END: (100.0, TIGHT), FA3: (101.0, TIGHT)},
}
COMPANION_SUSTAINED = {k: v for k, v in COMPANION.items() if k[1] == "sustained"}


def _with_gpu(rec, gpu="NVIDIA H100 80GB HBM3"):
    rec.write_json("env.json", {"gpu": gpu})
    return RunData(rec)


def test_a_companion_stands_in_for_the_rows_it_timed_and_no_others(tmp_path):
    run = _with_gpu(_run(tmp_path / "a"))
    companion = _with_gpu(_run(tmp_path / "b", COMPANION_SUSTAINED, run_id="20990107T000000Z-t46s"))
    t1, t2, t3, t4 = targets(run, END, companions=[companion])
    # target 1: the run's 1.005x hot and 0.975x causal D = 64 hot stay met, the companion's causal D = 64 sustained
    # and LONG sustained are met; the run's causal D = 128 hot 0.995x and wide D = 64 hot stay missed
    assert "met at 4 of 20 rows; missed: " in t1
    missed = t1.split("; missed: ")[1].split("; not measured: ")[0].split("; ")
    assert [m.split(" 0.")[0].split(" 1.")[0] for m in missed] == [
        "(4, 16, 4096, 128) causal hot", "(4, 16, 4096, 64) non-causal hot"]
    # target 2: GPT-2 sustained from the companion against its fastest peer, cuDNN, 0.965x: missed; S = 8192
    # sustained in neither: not measured
    assert re.search(r"met at 2 of 4 rows; missed: \(4, 12, 2048, 64, causal, bf16\) sustained against sdpa_cudnn "
                     r"0\.96\d× \[0\.9\d\d, 0\.9\d\d\] \(bar 0\.97\); not measured: \(1, 12, 8192, 64, causal, bf16\) "
                     r"sustained\.$", t2), t2
    assert re.fullmatch(r"- Target 3 \(sustained, at least 1\.02× flash_attn3\): met at 0 of 1 rows; missed: "
                        r"\(1, 16, 16384, 128\) non-causal sustained 1\.00\d× \[\d\.\d{3}, \d\.\d{3}\] "
                        r"\(bar 1\.02\)\.", t3)
    assert t4 == targets(run, END)[3]  # hot alone: the run's
    # a hot companion beside it: its (4, 16, 4096, 128) causal hot 1.01x stands in for the run's 0.995x (met); the hot
    # rows it lacks stay the run's (the 1.005x met, the wide D = 64 missed), and target 4 the run's
    hot = _with_gpu(_run(tmp_path / "c", {k: v for k, v in COMPANION.items() if k[1] == "hot"},
                         run_id="20990108T000000Z-t46h"))
    both = targets(run, END, companions=[companion, hot])
    assert "met at 5 of 20 rows; missed: (4, 16, 4096, 64) non-causal hot 1.00" in both[0], both[0]
    assert "(4, 16, 4096, 128) causal hot" not in both[0]
    assert both[1:] == [t2, t3, t4]
    assert targets(run, END, companions=[hot])[0].startswith(both[0].split(": met at")[0])
    assert "met at 4 of 20 rows" in targets(run, END, companions=[hot])[0]  # the hot row alone over the run's 3


def test_the_section_judges_the_targets_with_the_companions_as_well_and_sets_their_rows_beside_the_runs(tmp_path):
    from lab.report.context import Context
    from lab.report.sections.reference import section_reference

    run = _with_gpu(_run(tmp_path / "a"))
    companion = _with_gpu(_run(tmp_path / "b", COMPANION, run_id="20990107T000000Z-t46s"))
    text = "\n".join(section_reference(Context.of(run, tmp_path / "reports", companions=[companion])))
    own, block = text.split("**With the hot and sustained rows of run 20990107T000000Z-t46s ")
    assert "met at 3 of 20 rows" in own and "met at 5 of 20 rows" in block  # the run's own, then with the companion
    assert block.startswith("(those modes alone on the same GPU model: 3 replicates, a 3 s cap a hot row, 3 turns a "
                            "sustained row; this run: 3 replicates, a 3 s cap a hot row, 3 turns a sustained row).** "
                            "A companion's row of targets 1-3 stands in for this run's where it timed the end and the "
                            "peers the row needs (FA3, or at a models row every peer this run timed there); the others "
                            "stay this run's.")
    rows = {tuple(ln.split(" | ")[:2]): ln for ln in block.splitlines() if ln.startswith("| (")}
    tail = r" \| 20990107T000000Z-t46s \|"
    assert re.fullmatch(r"\| \(4, 16, 4096, 64\) causal \| sustained \| flash_attn3 \| 0\.96\d× \[.*\] \| "
                        r"0\.97\d× \[.*\]" + tail, rows[("| (4, 16, 4096, 64) causal", "sustained")])
    assert re.fullmatch(r"\| \(1, 16, 16384, 128\) non-causal \| sustained \| flash_attn3 \| 1\.03\d× \[.*\] \| "
                        r"1\.00\d× \[.*\]" + tail, rows[("| (1, 16, 16384, 128) non-causal", "sustained")])
    assert re.fullmatch(r"\| \(4, 16, 4096, 128\) causal \| hot \| flash_attn3 \| 0\.99\d× \[.*\] \| "
                        r"1\.01\d× \[.*\]" + tail, rows[("| (4, 16, 4096, 128) causal", "hot")])
    assert ("| (4, 16, 4096, 128) causal", "sustained") not in rows  # in neither run
    # a models row against the companion's fastest peer there (cuDNN, which this run did not time sustained)
    assert re.fullmatch(r"\| \(4, 12, 2048, 64\) causal, bf16 \| sustained \| sdpa_cudnn \| - \| 0\.96\d× \[.*\]" + tail,
                        rows[("| (4, 12, 2048, 64) causal, bf16", "sustained")])
    assert text.count("- Target 1 (") == 2
    # at a reference shape the row is against FA3 even where cuDNN is faster
    faster = {(LONG, "sustained"): {END: (100.0, TIGHT), FA3: (100.5, TIGHT), CUDNN: (99.0, TIGHT)}}
    run3 = _with_gpu(_run(tmp_path / "e", faster, run_id="R-3"))
    text = "\n".join(section_reference(Context.of(run3, tmp_path / "reports", companions=[
        _with_gpu(_run(tmp_path / "f", faster, run_id="R-4"))])))
    assert [ln.split(" | ")[2] for ln in text.split("**With the ")[1].splitlines() if ln.startswith("| (")] == [
        "flash_attn3"]
    # two companions, one a mode: one block, each named with its mode, each row beside the run's under its run
    sus = _with_gpu(_run(tmp_path / "c", COMPANION_SUSTAINED, run_id="20990108T000000Z-t46u"))
    hot = _with_gpu(_run(tmp_path / "d", {k: v for k, v in COMPANION.items() if k[1] == "hot"}, run_id="R-h"))
    text = "\n".join(section_reference(Context.of(run, tmp_path / "reports", companions=[sus, hot])))
    assert "**With the sustained rows of run 20990108T000000Z-t46u (that mode alone on the same GPU model: 3 " \
           "replicates, 3 turns a sustained row; this run: 3 replicates, 3 turns a sustained row) and the hot rows " \
           "of run R-h (that mode alone on the same GPU model: 3 replicates, a 3 s cap a hot row; this run: 3 " \
           "replicates, a 3 s cap a hot row).**" in text
    block = text.split("**With the sustained rows of run ")[1]
    assert [(ln.split(" | ")[1], ln.split(" | ")[-1]) for ln in block.splitlines() if ln.startswith("| (")] == \
        [("hot", "R-h |")] + [("sustained", "20990108T000000Z-t46u |")] * 3
    assert "met at 5 of 20 rows" in block and text.count("- Target 1 (") == 2


def test_a_companion_of_the_other_gpu_stands_in_for_the_base_s_rows_there_and_nowhere_else(tmp_path):
    """Issue 46 judges its targets on an H100 and an H200: a companion of the base's GPU model (another than the run's)
    is judged in the base's "On the other GPU" block, beside the base's own targets; the run's targets stay its own,
    and a companion of the run's model still stands in for the run's rows alone."""
    from lab.report.context import Context, companion_of
    from lab.report.sections.reference import companions_refusal, section_reference

    h100, h200 = (_with_gpu(_run(tmp_path / n, run_id=f"R-{n}"), g)
                  for n, g in (("a", "NVIDIA H100 80GB HBM3"), ("b", "NVIDIA H200")))
    of_h200 = _with_gpu(_run(tmp_path / "c", COMPANION_SUSTAINED, run_id="R-c"), "NVIDIA H200")
    of_h100 = _with_gpu(_run(tmp_path / "d", COMPANION_SUSTAINED, run_id="R-d"))
    assert companion_of(h100, h200, of_h200) is h200 and companion_of(h100, h200, of_h100) is h100
    assert companion_of(h100, None, of_h200) is h100  # without a base of that model: the run's (and refused)
    assert companion_of(h100, of_h100, h100) is h100  # a base of the run's own model takes no companion
    assert companions_refusal(h100, [of_h200, of_h100], h200) is None
    # the same sustained rows in the run's companion and the base's are no clash: each stands in for its own run
    text = "\n".join(section_reference(Context.of(h100, tmp_path / "reports", base=h200, companions=[of_h200])))
    own, other = text.split("**On the other GPU** ")
    assert "**With the" not in own and own.count("- Target 1 (") == 1 and "met at 3 of 20 rows" in own
    assert other.count("- Target 1 (") == 2 and "met at 3 of 20 rows" in other
    block = other.split("**With the sustained rows of run R-c (that mode alone on the same GPU model: ")[1]
    assert "met at 4 of 20 rows" in block  # as the run's companion makes of the run's rows (test above)
    assert all(ln.endswith("| R-c |") for ln in block.splitlines() if ln.startswith("| ("))
    both = "\n".join(section_reference(Context.of(h100, tmp_path / "reports", base=h200,
                                                   companions=[of_h100, of_h200])))
    own, other = both.split("**On the other GPU** ")
    assert "**With the sustained rows of run R-d " in own and "R-c" not in own
    assert "**With the sustained rows of run R-c " in other and "R-d" not in other
    # a companion of a third model, or two of the base's model timing one row, are refused
    a100 = _with_gpu(_run(tmp_path / "e", COMPANION_SUSTAINED, run_id="R-e"), "NVIDIA A100-SXM4-80GB")
    assert companions_refusal(h100, [a100], h200) == (
        "R-e ran on NVIDIA A100-SXM4-80GB, the run on NVIDIA H100 80GB HBM3 and its base on NVIDIA H200: a companion "
        "must be the run's GPU model or its base's")
    twice = _with_gpu(_run(tmp_path / "f", COMPANION_SUSTAINED, run_id="R-f"), "NVIDIA H200")
    assert companions_refusal(h100, [of_h200, twice], h200).startswith("R-c and R-f both timed")
    assert companions_refusal(h100, [a100], of_h100) == (  # a base of the run's own model: the plain refusal
        "R-e ran on NVIDIA A100-SXM4-80GB, the run on NVIDIA H100 80GB HBM3: a companion must be the same GPU model")
    assert companions_refusal(h100, [h200], h200) == "R-b is the report's base itself"


def test_a_companion_that_cannot_stand_in_is_refused_with_the_reason(tmp_path):
    from lab.report.sections.reference import companion_refusal, companions_refusal

    run = _with_gpu(_run(tmp_path / "a"))
    fine = _with_gpu(_run(tmp_path / "b", COMPANION, run_id="R-2"))
    assert companion_refusal(run, fine) is None and companions_refusal(run, [fine]) is None
    assert companion_refusal(run, run) == f"{run.run_id} is the run itself"
    h200 = _with_gpu(_run(tmp_path / "c", COMPANION, run_id="R-3"), "NVIDIA H200")
    assert companion_refusal(run, h200) == ("R-3 ran on NVIDIA H200, the run on NVIDIA H100 80GB HBM3: a companion "
                                            "must be the same GPU model")
    cold_only = _with_gpu(_run(tmp_path / "d", {(C4096_128, "cold"): COMPANION[(C4096_128, "hot")]}, run_id="R-4"))
    assert companion_refusal(run, cold_only) == "R-4 has no hot or sustained samples"
    unrecorded = RunData(_run(tmp_path / "f", COMPANION, run_id="R-6"))  # no env.json: no GPU recorded
    assert companion_refusal(run, unrecorded) == ("R-6 ran on an unrecorded GPU, the run on NVIDIA H100 80GB HBM3: "
                                                  "a companion must be the same GPU model")
    assert companion_refusal(unrecorded, run) == (f"{run.run_id} ran on NVIDIA H100 80GB HBM3, the run on an "
                                                  "unrecorded GPU: a companion must be the same GPU model")
    peers_only = _with_gpu(_run(tmp_path / "g", {(LONG, "sustained"): {FA3: (100.0, TIGHT)}}, run_id="R-7"))
    assert companion_refusal(peers_only, run) == "R-7 timed no arch-specific step: a companion has no rows to stand in for"
    other_step = {(LONG, "sustained"): {STEP35: (100.0, TIGHT), FA3: (100.5, TIGHT)}}
    assert companion_refusal(run, _with_gpu(_run(tmp_path / "e", other_step, run_id="R-5"))) == (
        f"R-5 has no samples of {END}, the run's arch-specific end")
    # several: each refused as alone (the first refusal named), and no row timed by two
    assert companions_refusal(run, [fine, h200]) == companion_refusal(run, h200)
    sus = _with_gpu(_run(tmp_path / "h", COMPANION_SUSTAINED, run_id="R-8"))
    long_too = _with_gpu(_run(tmp_path / "i", {(LONG, "sustained"): COMPANION[(LONG, "sustained")],
                                               (C4096_128, "hot"): COMPANION[(C4096_128, "hot")]}, run_id="R-9"))
    assert companions_refusal(run, [sus, long_too]) == (f"R-8 and R-9 both timed {END} at (1, 16, 16384, 128) "
                                                        "non-causal sustained: name one companion a row")
    assert companions_refusal(run, [sus, sus]).startswith("R-8 and R-8 both timed")
    hot = _with_gpu(_run(tmp_path / "j", {(C4096_128, "hot"): COMPANION[(C4096_128, "hot")]}, run_id="R-10"))
    assert companions_refusal(run, [sus, hot]) is None and companions_refusal(run, []) is None


def test_a_companion_stands_in_only_where_it_timed_the_peers_the_row_needs(tmp_path):
    """FA3 at a reference shape; at a models row every peer the run timed there, so that the fastest peer is chosen
    from no fewer: a companion that timed GPT-2 hot against FA3 alone (1.02x) does not stand in for the run's row
    against cuDNN (0.975x, met at 0.97), nor one without FA3 at (4, 16, 4096, 128, causal) hot."""
    from lab.report.sections.reference import standing_in

    run = _with_gpu(_run(tmp_path / "a"))
    partial = _with_gpu(_run(tmp_path / "b", {
        (GPT2, "hot"): {END: (100.0, TIGHT), FA3: (102.0, TIGHT)},            # no cuDNN, which the run timed there
        (C4096_128, "hot"): {END: (100.0, TIGHT), CUDNN: (110.0, TIGHT)},      # no FA3
        (GPT2, "sustained"): {END: (100.0, TIGHT), FA3: (98.0, TIGHT)},       # FA3, all the run timed there: in
    }, run_id="R-p"))
    assert standing_in(run, END, [partial], GPT2, "hot") is run
    assert standing_in(run, END, [partial], C4096_128, "hot") is run
    assert standing_in(run, END, [partial], GPT2, "sustained") is partial
    assert standing_in(run, END, [partial], LONG, "sustained") is run  # not timed by the companion
    t1, t2, _, _ = targets(run, END, companions=[partial])
    assert t1 == targets(run, END)[0]  # its only reference row lacks FA3: the run's line as it was
    assert "(4, 12, 2048, 64, causal, bf16) hot" not in t2  # the run's 0.975x against cuDNN, met
    assert "met at 3 of 4 rows; not measured: (1, 12, 8192, 64, causal, bf16) sustained." in t2  # sustained 0.98x
    # at a reference shape FA3 alone is needed, whatever else the run timed there
    both = {END: (100.0, TIGHT), FA3: (100.5, TIGHT), CUDNN: (110.0, TIGHT)}
    run2 = _with_gpu(_run(tmp_path / "c", {(LONG, "sustained"): both}, run_id="R-r"))
    fa3_only = _with_gpu(_run(tmp_path / "d", {(LONG, "sustained"): {END: (100.0, TIGHT), FA3: (99.0, TIGHT)}},
                              run_id="R-f"))
    assert standing_in(run2, END, [fa3_only], LONG, "sustained") is fa3_only


def test_the_first_screen_counts_parity_with_the_companions_rows_where_they_stand_in(tmp_path):
    """The top of the report's parity count against FA3 (the bar's rule: the point at least 1.0 and the lower end above
    0.99), then again with the rows the run's companions stand in for. From ROWS' construction, the reference rows with
    FA3 timed: hot (4, 16, 4096, 128) 1.005x (parity), its causal twin 0.995x, (4, 16, 4096, 64) wide and its causal
    twin 0.975x (not); sustained (1, 16, 16384, 128) 1.03x (parity) and (4, 16, 4096, 64) causal 0.965x (not).
    COMPANION brings the causal (4, 16, 4096, 128) hot row to 1.01x (parity), (4, 16, 4096, 64) causal sustained to
    0.975x and the long row to 1.005x: parity at the same sustained rows as before."""
    from lab.report.context import companions_for
    from lab.report.sections.reference import first_screen_line

    run = _with_gpu(_run(tmp_path / "a"))
    alone = "2 of 6 rows (hot 1 of 4, sustained 1 of 2)"
    assert first_screen_line(run) == (f"**Against FlashAttention-3: at parity or above at {alone}** ({END} against "
                                      "flash_attn3 at the canonical, large and long shapes: \"Against "
                                      "FlashAttention-3\").")
    both = _with_gpu(_run(tmp_path / "b", COMPANION, run_id="R-both"))
    assert first_screen_line(run, [both]).startswith(
        f"**Against FlashAttention-3: at parity or above at {alone}; with the hot and sustained rows of run R-both "
        "where they stand in, 3 of 6 rows (hot 2 of 4, sustained 1 of 2)** (")
    sus = _with_gpu(_run(tmp_path / "c", COMPANION_SUSTAINED, run_id="R-sus"))
    assert f"{alone}; with the sustained rows of run R-sus where they stand in, {alone}**" in first_screen_line(run, [sus])
    # a companion that stands in at no reference row (a models row alone) adds nothing; nor does none
    models_only = _with_gpu(_run(tmp_path / "d", {(GPT2, "sustained"): COMPANION[(GPT2, "sustained")]},
                                 run_id="R-models"))
    assert first_screen_line(run, [models_only]) == first_screen_line(run) == first_screen_line(run, [])
    # a companion where it stands in names itself alone; a base's companion is not the run's (companions_for)
    assert "rows of run R-sus where" in first_screen_line(run, [models_only, sus])
    assert "R-models" not in first_screen_line(run, [models_only, sus])
    h200 = _with_gpu(_run(tmp_path / "e", run_id="R-h200"), "NVIDIA H200")
    of_h200 = _with_gpu(_run(tmp_path / "f", COMPANION, run_id="R-of-h200"), "NVIDIA H200")
    assert companions_for(run, run, h200, [both, of_h200]) == [both]
    assert companions_for(h200, run, h200, [both, of_h200]) == [of_h200]
    assert companions_for(run, run, None, [both]) == [both]


def test_the_rows_a_companion_stands_in_for_carry_its_interval_and_its_run(tmp_path):
    """rows_standing_in takes a stood-in row's ratio and interval from the companion (COMPANION's causal (4, 16, 4096,
    128) hot row: FA3 at 101 us against the end's 100, 1.01x where the run's was 0.995x) and names the run each row
    came from; two companions, one a mode, are named together on the first screen."""
    from lab.report.sections.reference import end_rows, first_screen_line, rows_standing_in

    run = _with_gpu(_run(tmp_path / "a"))
    both = _with_gpu(_run(tmp_path / "b", COMPANION, run_id="R-both"))
    step, rows = end_rows(run)
    stood = rows_standing_in(run, step, rows, [both]).set_index(["shape", "mode"])
    row = stood.loc[(C4096_128, "hot")]
    assert row["run"] == "R-both" and 1.009 < row["lo"] < row["ratio"] < row["hi"] < 1.012
    assert abs(row["ratio"] - 1.01) < 0.001 and bool(row["parity"])
    own = stood.loc[(L4096_128, "hot")]  # a row the companion did not time: the run's
    assert own["run"] == run.run_id and abs(own["ratio"] - 1.005) < 0.001
    assert list(rows_standing_in(run, step, rows, [])["run"]) == [run.run_id] * len(rows)
    sus = _with_gpu(_run(tmp_path / "c", COMPANION_SUSTAINED, run_id="R-sus"))
    hot = _with_gpu(_run(tmp_path / "d", {k: v for k, v in COMPANION.items() if k[1] == "hot"}, run_id="R-hot"))
    assert ("; with the sustained rows of run R-sus and the hot rows of run R-hot where they stand in, 3 of 6 rows "
            "(hot 2 of 4, sustained 1 of 2)**") in first_screen_line(run, [sus, hot])
    # a run without a reference row (FA3 timed nowhere) has no line at all
    assert first_screen_line(_with_gpu(_run(tmp_path / "e", {(CANON_A, "hot"): ROWS[(CANON_A, "hot")]},
                                            run_id="R-none")), [both]) == ""
