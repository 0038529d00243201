"""The rules that decide the study's conclusions, at their edges (issue 20), CPU only and fast.

Each rule is fed synthetic inputs just above and just below each of its thresholds, and the
expected outcome is derived by hand from the rule as the docstrings and the report state it,
never from the code under test:
- lab.measure.stats.Comparison.verdict: p < alpha AND the whole interval outside [1 - band, 1 + band];
- the bar (lab.report.bar): parity = ratio >= 1.0 and lower end > 0.99; 1.10x = ratio >= 1.10 and
  lower end > 1.05, on two of the three canonical non-causal shapes; TFLOP/s targets (>=); the
  profile at the large shapes (0 spill bytes, bank conflicts < 1 %, tensor pipe >= 50 %);
- the hypothesis verdict and the prediction check of the ablation table (lab.report.tables);
- the regression gate (lab.studies.compare.compare): exit 1 when a variant is "slower" with a ratio below
  1 - threshold, or failed correctness; peers and the A/A twin never fail it;
- the stop rule a run's parameters give (lab.studies.params.RunParams.stop_rule, .replicate_rule);
- the tuned dispatch's choice (lab.studies.tuning.dispatch): a class takes the configuration with the
  best geometric-mean speedup only when its interval's lower end is above 1;
- lab.measure.stats.speedup_ci on samples of unequal sizes whose medians are known by construction.
"""

import math

import numpy as np
import pandas as pd
import pytest

from lab.measure import records, stats, timing
from lab.studies import compare as gate
from lab.studies.params import RunParams
from lab.studies.shapes import shape_set
from lab.studies.tuning import dispatch as td
from lab.report import bar
from lab.report.tables import _vs_prediction, hypothesis_verdict
from lab.kernels.shape import Shape
from lab.measure.stats import Comparison, SpeedupCI
from lab.kernels.manifest import tuned_kernel

# The kernel whose tile constants are tuned (the sm_90a branch's end, read from the manifest), so that
# a new step at the end of the branch leaves these tests as they are.
END = tuned_kernel()

# --- Comparison.verdict ----------------------------------------------------------------------


def _cmp(lo, hi, p=1e-6, ratio=None, band=0.01, alpha=0.05):
    ratio = (lo + hi) / 2 if ratio is None else ratio
    return Comparison(speedup=SpeedupCI(ratio, lo, hi, "BCa"), cliffs_delta=0.0, hl_log_ratio=0.0, p_value=p,
                      p_adjusted=p, noise_band=band, alpha=alpha)


@pytest.mark.parametrize("lo, hi, expected", [
    (1.0101, 1.05, "faster"),  # whole interval above 1.01
    (1.01, 1.05, "within noise"),  # lower end on the band's edge: not outside it
    (1.0099, 1.05, "within noise"),
    (0.95, 0.9899, "slower"),  # whole interval below 0.99
    (0.95, 0.99, "within noise"),
    (0.95, 0.9901, "within noise"),
    (0.98, 1.02, "within noise"),
])
def test_verdict_needs_the_whole_interval_outside_the_noise_band(lo, hi, expected):
    assert _cmp(lo, hi).verdict() == expected


def test_slower_is_judged_by_the_upper_end_not_the_point_estimate():
    # the point estimate is well below 0.99 but the interval reaches into the band
    assert _cmp(0.90, 0.995, ratio=0.95).verdict() == "within noise"
    # and well above 1.01, with the interval reaching down into the band
    assert _cmp(1.005, 1.10, ratio=1.05).verdict() == "within noise"
    # the point estimate inside the band but the whole interval below it (a skewed interval)
    assert _cmp(0.97, 0.989, ratio=0.9895).verdict() == "slower"
    assert _cmp(1.011, 1.03, ratio=1.0105).verdict() == "faster"


@pytest.mark.parametrize("p, expected", [(0.0499, "faster"), (0.05, "within noise"), (0.2, "within noise"),
                                         (float("nan"), "within noise")])
def test_verdict_needs_the_corrected_p_below_alpha(p, expected):
    assert _cmp(1.2, 1.3, p=p).verdict() == expected
    # the p given to verdict() wins over the stored one, both ways
    assert _cmp(1.2, 1.3, p=0.5).verdict(p_adjusted=p) == expected
    assert _cmp(1.2, 1.3, p=p).verdict(p_adjusted=0.001) == "faster"


def test_a_row_that_could_not_be_tested_is_within_noise():
    c = _cmp(1.2, 1.3)
    c.p_adjusted = None  # compare_rows never adjusted it
    assert c.verdict() == "within noise"


def test_verdict_follows_its_own_band_and_alpha():
    assert _cmp(1.03, 1.05, band=0.05).verdict() == "within noise"
    assert _cmp(1.051, 1.06, band=0.05).verdict() == "faster"
    assert _cmp(0.90, 0.949, band=0.05).verdict() == "slower"
    assert _cmp(1.2, 1.3, p=0.08, alpha=0.1).verdict() == "faster"
    assert _cmp(1.2, 1.3, p=0.001, alpha=0.001).verdict() == "within noise"


# --- the bar -----------------------------------------------------------------------------------

CANON = [Shape(1, 8, 512, 64, False), Shape(4, 16, 512, 64, False), Shape(8, 16, 512, 64, False)]
LARGE64 = Shape(4, 16, 4096, 64, False)
LARGE128 = Shape(4, 16, 4096, 128, False)
BEST, FASTEST, PEER = "best_step", "sdpa_cudnn", "sdpa_flash"


class FakeData:
    """What the bar reads from a run (lab.report.load.RunData's interface), with every speedup
    interval and median given exactly: no samples and no bootstrap between the rule and the test."""

    def __init__(self, cis: dict, medians: dict | None = None, profile: dict | None = None, modes=("hot",)):
        self.cis = cis  # (impl, base, shape, mode) -> (ratio, lo, hi)
        self.medians = medians or {}  # (impl, shape, mode) -> us
        self.profile = profile or {}  # (impl, shape) -> profile row
        self.modes = list(modes)
        self.measured_shapes = list(dict.fromkeys(k[2] for k in cis))
        self.build, self.env = {}, {}

    def fastest_sdpa(self, shape, mode):
        return FASTEST if shape in self.measured_shapes and mode in self.modes else None

    def speedup(self, impl, base, shape, mode):
        c = self.cis.get((impl, base, shape, mode))
        return SpeedupCI(c[0], c[1], c[2], "BCa") if c else None

    def median(self, impl, shape, mode):
        return self.medians.get((impl, shape, mode))

    def lat(self, impl, shape, mode):
        return None

    def profile_shape_for(self, shape):
        return shape if any(k[1] == shape for k in self.profile) else None

    def profile_row(self, impl, pshape):
        return self.profile.get((impl, pshape))


def _bar_data(rows: dict, **kw):
    """rows: shape -> (ratio, lo) of BEST against the fastest SDPA backend, hot mode."""
    return FakeData({(BEST, FASTEST, sh, "hot"): (r, lo, r + 0.02) for sh, (r, lo) in rows.items()}, **kw)


EDGES = [  # (ratio, lower end) -> (parity, 1.10x, the row's label), by the bar's rule
    ((1.0, 0.9901), (True, False, "≥ 1.0×")),
    ((0.9999, 0.995), (False, False, "below 1.0×")),
    ((1.0, 0.99), (False, False, "lower end ≤ 0.99")),
    ((1.3, 0.98), (False, False, "lower end ≤ 0.99")),
    ((1.10, 1.0501), (True, True, "≥ 1.10×")),
    ((1.0999, 1.06), (True, False, "≥ 1.0×")),
    ((1.10, 1.05), (True, False, "≥ 1.0×")),
    ((1.5, 1.2), (True, True, "≥ 1.10×")),
]
EDGE_SHAPES = [Shape(s.B, s.H, s.S, s.D, c) for c in (False, True) for s in CANON] + bar.BAR_LARGE[:2]


def test_bar_rows_judge_parity_and_the_fast_rule_at_their_edges():
    data = _bar_data({sh: case for sh, (case, _) in zip(EDGE_SHAPES, EDGES)})
    rows = bar.bar_rows(data, BEST, PEER)
    assert list(rows["shape"]) == EDGE_SHAPES  # canonical non-causal, canonical causal, then large
    for r, (case, (parity, fast, label)) in zip(rows.itertuples(), EDGES):
        assert (r.ratio, r.lo) == case
        assert (r.parity, r.fast) == (parity, fast), case
        assert bar.row_level(r) == label, case
        assert r.fastest == FASTEST and r.flash is None


def test_portable_bar_rows_use_the_same_rule_against_flashattention2():
    shapes = shape_set("canonical")[:len(EDGES)]
    data = FakeData({("end", PEER, sh, "hot"): (r, lo, r + 0.02) for sh, ((r, lo), _) in zip(shapes, EDGES)})
    rows = bar.portable_bar_rows(data, "end", PEER)
    assert len(rows) == 7
    for r, (case, (parity, fast, _)) in zip(rows.itertuples(), EDGES):
        assert (r.ratio, r.lo, r.parity, r.fast) == (*case, parity, fast)
    text = "\n".join(bar.portable_bar(data, "end", PEER))
    # of the first 7 edge cases, 4 reach parity; the canonical non-causal shapes are the 1st, 3rd
    # and 5th, with (1.0, .9901), (1.0, .99) and (1.10, 1.0501): one at 1.10x
    assert "4 of 7 rows" in text and "1 of 3 hot" in text


def test_reference_rows_cover_canonical_large_long_in_every_mode_with_sustained_only_where_timed():
    """Against FlashAttention-3 (lab.report.sections.reference): the bar's parity rule at the canonical, large
    and long shapes the run measured, the burst modes everywhere and the sustained mode where the run has it."""
    from lab.report.sections import reference
    canon, large, long_ = shape_set("canonical")[0], shape_set("large")[2], shape_set("long")[0]
    sweep_only = Shape(64, 16, 256, 64, False)  # not in the three sets: left out
    cis = {("end", "flash_attn3", long_, "hot"): (0.95, 0.94, 0.96),
           ("end", "flash_attn3", canon, "hot"): (1.0, 0.9901, 1.01),
           ("end", "flash_attn3", canon, "cold"): (1.0, 0.99, 1.01),
           ("end", "flash_attn3", large, "hot"): (1.2, 1.1, 1.3),
           ("end", "flash_attn3", large, "sustained"): (0.9999, 0.98, 1.02),
           ("end", "flash_attn3", sweep_only, "hot"): (2.0, 1.9, 2.1)}
    data = FakeData(cis, modes=("hot", "cold"))
    data.sustained_shapes = [large]
    rows = reference.reference_rows(data, "end")
    # canonical, then large, then long (the sets' order), each shape's modes hot, cold, sustained
    assert [(r.shape, r.mode) for r in rows.itertuples()] == [
        (canon, "hot"), (canon, "cold"), (large, "hot"), (large, "sustained"), (long_, "hot")]
    # parity: ratio >= 1.0 and lower end > 0.99 (by hand: the first and the third)
    assert list(rows["parity"]) == [True, False, True, False, False]
    assert reference.parity_words(rows) == "2 of 5 rows (hot 2 of 3, cold 0 of 1, sustained 0 of 1)"
    data.sustained_shapes = []  # a run without the sustained mode: no sustained rows even where an interval exists
    assert "sustained" not in set(reference.reference_rows(data, "end")["mode"])


def _verdict(parts, label_start):
    (part,) = [p for p in parts if p[0].startswith(label_start)]
    return part[1]


@pytest.mark.parametrize("fast_count, met", [(3, True), (2, True), (1, False), (0, False)])
def test_two_of_three_canonical_shapes_must_reach_1_10x(fast_count, met):
    cases = [(1.2, 1.1)] * fast_count + [(1.09, 1.0)] * (3 - fast_count)
    data = _bar_data(dict(zip(CANON, cases)))
    parts = bar.bar_verdicts(data, BEST, bar.bar_rows(data, BEST))
    assert _verdict(parts, "canonical non-causal, hot") is met
    assert f"{fast_count} of 3 at ≥ 1.1×" in [p for p in parts if p[0].startswith("canonical")][0][2]


def test_the_fast_count_is_not_judged_without_all_three_canonical_shapes():
    data = _bar_data(dict(zip(CANON[:2], [(1.2, 1.1)] * 2)))
    parts = bar.bar_verdicts(data, BEST, bar.bar_rows(data, BEST))
    assert [p[0] for p in parts] == [f"{CANON[0]}, hot, vs {FASTEST}", f"{CANON[1]}, hot, vs {FASTEST}"]


# TFLOP/s = 4 B H S^2 D / t (non-causal). (4, 16, 4096, 64): 4*4*16*4096^2*64 = 2^38 FLOP, so the
# 490 TFLOP/s target is t = 2^38 / 490e12 s = 560.98 us; (4, 16, 4096, 128): 2^39 FLOP, 600 TFLOP/s
# at 916.27 us.
@pytest.mark.parametrize("shape, us, met", [(LARGE64, 560.0, True), (LARGE64, 562.0, False),
                                            (LARGE128, 916.0, True), (LARGE128, 917.0, False)])
def test_tflops_targets_at_their_edges(shape, us, met):
    data = _bar_data({shape: (1.0, 0.995)}, medians={(BEST, shape, "hot"): us})
    parts = bar.bar_verdicts(data, BEST, bar.bar_rows(data, BEST))
    assert _verdict(parts, "TFLOP/s") is met
    tf = 2 ** (38 if shape.D == 64 else 39) / (us * 1e-6) / 1e12
    line = [ln for ln in bar.bar_tflops_lines(data, BEST) if str(shape) in ln][0]
    assert f"**{'met' if met else 'missed'}**, {tf:.1f} TFLOP/s ({us:.2f} µs, hot median)" in line
    assert "- (1, 16, 16384, 128) non-causal: ≥ 620 TFLOP/s: not measured in this run." in bar.bar_tflops_lines(
        data, BEST)


@pytest.mark.parametrize("row, met", [
    (dict(local_bytes=0, bank_conflict_pct=0.99, tensor_pipe_active=50.0), True),
    (dict(local_bytes=0, bank_conflict_pct=1.0, tensor_pipe_active=80.0), False),
    (dict(local_bytes=0, bank_conflict_pct=0.0, tensor_pipe_active=49.99), False),
    (dict(local_bytes=1, bank_conflict_pct=0.0, tensor_pipe_active=90.0), False),
    (dict(local_bytes_ld=0, local_bytes_st=4, bank_conflict_pct=0.0, tensor_pipe_active=90.0), False),  # older runs
    (dict(local_bytes_ld=0, local_bytes_st=0, bank_conflict_pct=0.0, tensor_pipe_active=90.0), True),
    (dict(local_bytes=0, tensor_pipe_active=90.0), False),  # no bank-conflict figure: not shown met
    (dict(local_bytes=0, bank_conflict_pct=0.0), False),
])
def test_profile_part_of_the_bar_at_its_edges(row, met):
    data = _bar_data({LARGE64: (1.0, 0.995)}, profile={(BEST, LARGE64): row})
    lines, parts = bar._profile_verdicts(data, BEST)
    assert [p[1] for p in parts] == [met]  # only the large shape that has a profile row
    assert ("meets" if met else "misses") in lines[0]


def test_success_bar_counts_the_parts_met():
    # three canonical non-causal rows, two at 1.10x; one large row below parity; the 490 TFLOP/s
    # target met, the others not measured; no profile. Parts: 4 rows (3 met), two of three at
    # 1.10x (met), one TFLOP/s target (met): 5 of 6.
    rows = dict(zip(CANON, [(1.2, 1.15), (1.12, 1.06), (1.0, 0.995)]))
    rows[LARGE64] = (0.98, 0.97)
    data = _bar_data(rows, medians={(BEST, LARGE64, "hot"): 560.0})
    text = "\n".join(bar.success_bar(data, BEST, PEER))
    assert "**Verdict:** 5 of 6 parts of the bar met. Missed:" in text
    missed = text.split("Missed:")[1]
    assert f"- {LARGE64}, hot, vs {FASTEST}: 0.980× [0.970, 1.000]." in missed
    assert str(CANON[0]) not in missed
    everything = _bar_data(dict(zip(CANON, [(1.2, 1.15)] * 3)))
    assert "**Verdict:** 4 of 4 parts of the bar met. All met." in "\n".join(bar.success_bar(everything, BEST))
    assert bar.success_bar(_bar_data({}), BEST) == [] and bar.success_bar(everything, "") == []


def test_success_bar_text_for_a_run_written_out_by_hand():
    # Four hot rows against sdpa_cudnn (ratio, lower end, upper end): three canonical non-causal
    # shapes, two of them at 1.10x, one at parity; the large D = 64 shape below parity. That shape's
    # hot median, 560 us, gives 2^38 FLOP / 560 us = 490.9 TFLOP/s (the 490 target met); its profile
    # meets the limits; its launch: 4096 / 128 rows x 4 x 16 = 2048 CTAs, and 1024 CTAs in 3.88
    # waves on 132 SMs at the profiled shape = 2 per SM, so 2048 / 264 = 7.76 waves.
    peer = "flash_peer"
    cis = {(BEST, FASTEST, CANON[0], "hot"): (1.2, 1.15, 1.22), (BEST, peer, CANON[0], "hot"): (1.3, 1.25, 1.35),
           (BEST, FASTEST, CANON[1], "hot"): (1.12, 1.06, 1.14), (BEST, FASTEST, CANON[2], "hot"): (1.0, 0.995, 1.02),
           (BEST, FASTEST, LARGE64, "hot"): (0.98, 0.97, 1.0)}
    medians = {(BEST, CANON[0], "hot"): 10.0, (FASTEST, CANON[0], "hot"): 12.0, (peer, CANON[0], "hot"): 13.0,
               (BEST, LARGE64, "hot"): 560.0}
    profile = {(BEST, LARGE64): dict(local_bytes=0, bank_conflict_pct=0.5, tensor_pipe_active=61.2, grid_size=1024,
                                     waves=3.88, sm_count=132)}
    data = FakeData(cis, medians, profile)
    data.build = {BEST: {"launch": {"64": {"rows_per_block": 128}}}}
    expected = """\
| shape | mode | best_step µs | fastest SDPA | its µs | best_step vs fastest [95% CI] | flash_peer µs | \
best_step vs flash_peer [95% CI] | p90 µs (best_step / fastest) | this row |
| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |
| (1, 8, 512, 64) non-causal | hot | 10.00 | sdpa_cudnn | 12.00 | 1.200× [1.150, 1.220] | 13.00 | \
1.300× [1.250, 1.350] | — / — | ≥ 1.10× |
| (4, 16, 512, 64) non-causal | hot | — | sdpa_cudnn | — | 1.120× [1.060, 1.140] | — | — | — / — | ≥ 1.10× |
| (8, 16, 512, 64) non-causal | hot | — | sdpa_cudnn | — | 1.000× [0.995, 1.020] | — | — | — / — | ≥ 1.0× |
| (4, 16, 4096, 64) non-causal | hot | 560.00 | sdpa_cudnn | — | 0.980× [0.970, 1.000] | — | — | — / — | \
below 1.0× |

TFLOP/s targets (hot):

- (1, 16, 16384, 128) non-causal: ≥ 620 TFLOP/s: not measured in this run.
- (4, 16, 4096, 128) non-causal: ≥ 600 TFLOP/s: not measured in this run.
- (4, 16, 4096, 64) non-causal: ≥ 490 TFLOP/s: **met**, 490.9 TFLOP/s (560.00 µs, hot median).

Profile of best_step: (4, 16, 4096, 64) non-causal: local-memory (spill) traffic 0 bytes, bank conflicts 0.5 % \
of shared wavefronts, tensor pipe active 61.2 % (meets 0 spills, < 1 % conflicts, ≥ 50 % tensor pipe).

**Verdict:** 6 of 7 parts of the bar met. Missed:

- (4, 16, 4096, 64) non-causal, hot, vs sdpa_cudnn: 0.980× [0.970, 1.000] (launch: (4, 16, 4096, 64) \
non-causal: 2048 CTAs of 128 rows, 2 per SM: 7.76 waves).
"""
    assert "\n".join(bar.success_bar(data, BEST, peer)) == expected


def test_the_launch_note_of_a_persistent_kernel_counts_work_tiles_not_waves():
    # Profiled at the shape itself: 264 CTAs in 1.0 wave on 132 SMs = 2 per SM, fewer CTAs than the
    # 4096 / 64 x 4 x 16 = 4096 work tiles of 64 rows: persistent, 4096 / 264 = 15.52 tiles a CTA.
    # A grid of one CTA per tile (4096 CTAs in 15.52 waves at 2 per SM) is the non-persistent note.
    data = FakeData({}, {}, {(BEST, LARGE64): dict(grid_size=264, waves=1.0, sm_count=132)})
    data.build = {BEST: {"launch": {"64": {"rows_per_block": 64}}}}
    assert bar._grid_note(data, BEST, LARGE64) == \
        "persistent: 264 CTAs, 2 per SM, walk 4096 work tiles of 64 rows, 15.52 a CTA"
    data = FakeData({}, {}, {(BEST, LARGE64): dict(grid_size=4096, waves=15.52, sm_count=132)})
    data.build = {BEST: {"launch": {"64": {"rows_per_block": 64}}}}
    assert bar._grid_note(data, BEST, LARGE64) == "4096 CTAs of 64 rows, 2 per SM: 15.52 waves"


def test_the_launch_note_takes_a_profile_only_of_the_same_grid():
    # Step 33 launches three CTAs an SM at (32, 8, 512, 64) (2048 work tiles) and two at (4, 16, 512, 64)
    # (512): a profile at the first must not describe the second, though S and D agree. The same
    # grid causal is the same launch: it stands in.
    stand_in, small = Shape(32, 8, 512, 64, False), Shape(4, 16, 512, 64, False)

    class StandIn(FakeData):
        def profile_shape_for(self, shape):
            return stand_in if (shape.S, shape.D) == (stand_in.S, stand_in.D) else None

    data = StandIn({}, {}, {(BEST, stand_in): dict(grid_size=396, waves=1.0, sm_count=132)})
    data.build = {BEST: {"launch": {"64": {"rows_per_block": 64}}}}
    assert bar._grid_note(data, BEST, small) == ""
    assert bar._grid_note(data, BEST, Shape(32, 8, 512, 64, True)) == \
        "persistent: 396 CTAs, 3 per SM, walk 2048 work tiles of 64 rows, 5.17 a CTA"
    # A grid of one CTA per tile (2048 CTAs at the stand-in, 5.17 waves of 3 an SM) keeps its tile
    # at another B and H: 512 CTAs / (3 x 132) = 1.29 waves.
    data = StandIn({}, {}, {(BEST, stand_in): dict(grid_size=2048, waves=5.17, sm_count=132)})
    data.build = {BEST: {"launch": {"64": {"rows_per_block": 64}}}}
    assert bar._grid_note(data, BEST, small) == "512 CTAs of 64 rows, 3 per SM: 1.29 waves"


def test_bar_parts_without_rows_and_at_the_tflops_target_exactly(monkeypatch):
    data = _bar_data({}, medians={(BEST, LARGE64, "hot"): 560.0})
    parts = bar.bar_verdicts(data, BEST, pd.DataFrame())  # no speedup row: the TFLOP/s target alone
    assert [(p[0], p[1], p[2]) for p in parts] == [
        ("TFLOP/s at (4, 16, 4096, 64) non-causal, hot: ≥ 490", True, "490.9 TFLOP/s measured (met)")]
    missed = bar.bar_verdicts(_bar_data({}, medians={(BEST, LARGE64, "hot"): 562.0}), BEST, pd.DataFrame())
    assert missed[0][1:3] == (False, "489.1 TFLOP/s measured (missed)")
    monkeypatch.setattr(bar.stats, "tflops", lambda *a: 490.0)  # exactly the target: "at least" is met
    assert bar.bar_verdicts(data, BEST, pd.DataFrame())[0][1:3] == (True, "490.0 TFLOP/s measured (met)")
    assert "**met**, 490.0 TFLOP/s" in bar.bar_tflops_lines(data, BEST)[2]


def test_profile_parts_read_each_large_shape_and_the_spill_bytes():
    # only the second large shape has a profile; the older split of local loads and stores is summed
    row = dict(local_bytes_ld=4, local_bytes_st=0, bank_conflict_pct=0.25, tensor_pipe_active=70.0)
    lines, parts = bar._profile_verdicts(_bar_data({}, profile={(BEST, LARGE128): row}), BEST)
    assert lines == ["(4, 16, 4096, 128) non-causal: local-memory (spill) traffic 4 bytes, bank conflicts 0.25 % of "
                     "shared wavefronts, tensor pipe active 70 % (misses 0 spills, < 1 % conflicts, ≥ 50 % tensor "
                     "pipe)"]
    assert parts == [("profile at (4, 16, 4096, 128) non-causal", False, lines[0].split(": ", 1)[1], [LARGE128])]
    row = dict(local_bytes_ld=0, local_bytes_st=8, bank_conflict_pct=0.0, tensor_pipe_active=70.0)
    lines, _ = bar._profile_verdicts(_bar_data({}, profile={(BEST, LARGE128): row}), BEST)
    assert "traffic 8 bytes" in lines[0]


def test_bar_rows_take_every_mode_a_shape_has_and_the_profile_line_joins_the_shapes():
    # no hot interval at the first shape: its cold row still counts, and the next shape's rows too
    data = FakeData({(BEST, FASTEST, CANON[0], "cold"): (1.2, 1.1, 1.3), (BEST, FASTEST, CANON[1], "hot"):
                     (1.0, 0.995, 1.01)}, modes=("hot", "cold"))
    rows = bar.bar_rows(data, BEST)
    assert [(r.shape, r.mode) for r in rows.itertuples()] == [(CANON[0], "cold"), (CANON[1], "hot")]
    good = dict(local_bytes=0, bank_conflict_pct=0.0, tensor_pipe_active=60.0)
    data.profile = {(BEST, LARGE64): good, (BEST, LARGE128): good}
    (line,) = [ln for ln in bar.success_bar(data, BEST) if ln.startswith("Profile of")]
    assert line.count("; (4, 16, 4096, 128) non-causal: local-memory") == 1 and line.endswith("tensor pipe).")


def test_portable_rows_carry_the_medians_and_every_mode():
    sh = shape_set("canonical")[0]
    data = FakeData({("end", PEER, sh, "cold"): (1.05, 1.01, 1.09)}, medians={("end", sh, "cold"): 20.0,
                                                                            (PEER, sh, "cold"): 21.0},
                    modes=("hot", "cold"))  # no hot interval at this shape: the cold row still counts
    rows = bar.portable_bar_rows(data, "end", PEER)
    assert [(r.mode, r.ratio, r.lo, r.hi, r.step_us, r.peer_us) for r in rows.itertuples()] == [
        ("cold", 1.05, 1.01, 1.09, 20.0, 21.0)]


def test_bar_shapes_are_canonical_then_large_then_long_where_measured():
    long_shape = Shape(2, 16, 8192, 128, True)
    sweep_only = Shape(64, 16, 256, 64, False)
    data = _bar_data({sh: (1.0, 1.0) for sh in [long_shape, sweep_only, LARGE128, CANON[2], CANON[0]]})
    assert bar.bar_shapes(data) == [CANON[0], CANON[2], LARGE128, long_shape]


# --- the hypothesis verdict and the prediction check ----------------------------------------------

@pytest.mark.parametrize("direction, parent, value, speed, predicted, expected", [
    # METRIC_MOVE = 5 %: a move of more than 5 % (relative) counts
    ("down", 100.0, 94.9, "faster", (1.1, 2.0), "confirmed"),
    ("down", 100.0, 95.0, "faster", (1.1, 2.0), "inconclusive"),
    ("up", 100.0, 105.1, "faster", (1.1, 2.0), "confirmed"),
    ("up", 100.0, 105.0, "faster", (1.1, 2.0), "inconclusive"),
    ("down", 100.0, 105.1, "faster", (1.1, 2.0), "refuted"),  # the other way by more than 5 %
    ("down", 100.0, 105.0, "faster", (1.1, 2.0), "inconclusive"),
    ("up", 100.0, 94.9, "faster", (1.1, 2.0), "refuted"),
    ("up", 100.0, 95.0, "faster", (1.1, 2.0), "inconclusive"),
    ("up", 100.0, 120.0, "slower", (1.1, 2.0), "refuted"),  # slower refutes whatever the metric
    ("up", 100.0, 120.0, "within noise", (1.0, 2.0), "confirmed"),  # prediction includes 1.0 (edge)
    ("up", 100.0, 120.0, "within noise", (0.5, 1.0), "confirmed"),
    ("up", 100.0, 120.0, "within noise", (1.0001, 2.0), "inconclusive"),
    ("up", 100.0, 120.0, "within noise", (0.5, 0.9999), "inconclusive"),
    ("up", 100.0, 120.0, "within noise", None, "inconclusive"),
    ("up", 100.0, 120.0, "not measured", (0.5, 2.0), "inconclusive"),
    ("up", 100.0, None, "faster", (1.1, 2.0), "inconclusive (no profile)"),
    # from a metric of 0: any rise is an infinite relative move, no change none
    ("up", 0.0, 5.0, "faster", (1.1, 2.0), "confirmed"),
    ("down", 0.0, 5.0, "faster", (1.1, 2.0), "refuted"),
    ("down", 0.0, 0.0, "faster", (1.1, 2.0), "inconclusive"),
    ("up", 1.0, 1.04, "faster", (1.1, 2.0), "inconclusive"),  # from 1: a 4 % move
    ("down", 1.0, 0.0, "faster", (1.1, 2.0), "confirmed"),  # from 1 to 0: -100 %
])
def test_hypothesis_verdict_at_its_edges(direction, parent, value, speed, predicted, expected):
    assert hypothesis_verdict(direction, parent, value, speed, predicted) == expected


@pytest.mark.parametrize("lo, hi, expected", [(1.0, 1.09, "below"), (1.0, 1.1, "within"), (2.0, 2.5, "within"),
                                              (2.01, 2.5, "above"), (1.5, 1.6, "within"), (0.5, 3.0, "within")])
def test_speedup_against_the_predicted_range(lo, hi, expected):
    assert _vs_prediction(SpeedupCI((lo + hi) / 2, lo, hi, "BCa"), (1.1, 2.0)) == expected
    assert _vs_prediction(None, (1.1, 2.0)) == _vs_prediction(SpeedupCI(1, 1, 1, "exact"), None) == "—"


# --- the regression gate -------------------------------------------------------------------------

BASE_ID, RUN_ID = "20260101T000000Z-base", "20260102T000000Z-new"


def _gate_run(root, run_id, samples: dict, failed=(), gpu="NVIDIA H200", state="complete", shape=None):
    rec = records.RunRecord(run_id=run_id, root=root)
    rec.write_json("env.json", {"gpu": gpu})
    rec.write_json("correctness.json", [{"variant": v, "case": "c", "passed": v not in failed} for v in samples])
    """samples: impl -> latencies (one replicate) or {replicate: latencies}."""
    reps = {impl: xs if isinstance(xs, dict) else {0: xs} for impl, xs in samples.items()}
    dims = shape or dict(B=1, H=8, S=512, D=64, causal=False)
    rows = [dict(run_id=run_id, impl=impl, **dims, mode="hot", sample=i, latency_us=float(x), sm_clock_mhz=1980.0,
                 throttled=False, replicate=r)
            for impl, by_rep in reps.items() for r, xs in by_rep.items() for i, x in enumerate(xs)]
    rec.write_table("samples.parquet", pd.DataFrame(rows, columns=records.SAMPLE_COLUMNS))
    rec.finish(state)
    return rec


@pytest.fixture
def runs_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "RUNS_DIR", tmp_path)
    return tmp_path


TIGHT = 100.0 * np.exp(np.random.default_rng(0).normal(0, 0.002, 200))  # spread 0.2 %: tight intervals
NOISY = 100.0 * np.exp(np.random.default_rng(1).normal(0, 0.5, 8))


def _gate(runs_dir, ratios: dict, base=TIGHT, failed=(), threshold=0.02):
    """RUN's samples are BASE's divided by the wanted speedup (median(base) / median(run) = ratio)."""
    _gate_run(runs_dir, BASE_ID, {impl: base for impl in ratios})
    _gate_run(runs_dir, RUN_ID, {impl: base / r for impl, r in ratios.items()}, failed=failed)
    lines = []
    code = gate.compare(RUN_ID, BASE_ID, threshold=threshold, progress=lines.append)
    return code, "\n".join(lines)


@pytest.mark.parametrize("ratio, code", [(0.9795, 1), (0.9805, 0), (0.975, 1), (0.985, 0), (1.0, 0), (1.05, 0)])
def test_gate_fails_a_variant_slower_beyond_the_threshold(runs_dir, ratio, code):
    got, text = _gate(runs_dir, {"wmma": ratio})
    assert got == code, text
    assert ("slower" in text) == (ratio < 0.99)


def test_gate_threshold_is_a_parameter(runs_dir):
    assert _gate(runs_dir, {"wmma": 0.985}, threshold=0.01)[0] == 1


@pytest.mark.parametrize("threshold, code", [(0.5, 0), (0.4999, 1)])
def test_gate_at_exactly_the_threshold(runs_dir, threshold, code):
    # RUN's samples are exactly twice BASE's (a scaling by 2 is exact), so the ratio is exactly
    # 0.5 = 1 - 0.5: "slower by more than the threshold" is false at the threshold itself
    assert _gate(runs_dir, {"wmma": 0.5}, threshold=threshold)[0] == code


def test_gate_of_a_run_without_correctness_results(runs_dir):
    _gate_run(runs_dir, BASE_ID, {"wmma": TIGHT})
    rec = _gate_run(runs_dir, RUN_ID, {"wmma": TIGHT * 0.9})  # faster
    rec.path("correctness.json.gz").unlink()  # RunRecord keeps it compressed (records.COMPRESSED)
    assert gate.compare(RUN_ID, BASE_ID, progress=lambda s: None) == 0


def test_gate_threshold_defaults_to_2_percent(runs_dir):
    # `make compare` passes no threshold: 3 % slower fails, 1.5 % slower passes (below 0.99 it is
    # still "slower", but not beyond 1 - 0.02)
    _gate_run(runs_dir, BASE_ID, {"wmma": TIGHT, "tma": TIGHT})
    _gate_run(runs_dir, RUN_ID, {"wmma": TIGHT / 0.97, "tma": TIGHT / 0.985})
    lines = []
    assert gate.compare(RUN_ID, BASE_ID, progress=lines.append) == 1
    assert lines[-1].startswith("1 significant regressions beyond 2.0% (the rows marked '!'): wmma at (")
    marked = [ln for ln in lines if ln.startswith("! ")]
    assert len(marked) == 1 and marked[0].split()[1] == "wmma", "the regression is marked among the rows"
    assert not any(ln.startswith("! ") and "tma" in ln.split()[1] for ln in lines), "1.5 % slower is not marked"


def test_gate_compares_with_the_base_it_is_given(runs_dir):
    # the best earlier run (a, twice as fast) is not the one asked for: against b, RUN is unchanged
    _gate_run(runs_dir, "20251231T000000Z-a", {"wmma": TIGHT * 0.5})
    _gate_run(runs_dir, BASE_ID, {"wmma": TIGHT})
    _gate_run(runs_dir, RUN_ID, {"wmma": TIGHT})
    lines = []
    assert gate.compare(RUN_ID, BASE_ID, progress=lines.append) == 0
    assert lines[0] == f"comparing {RUN_ID} against {BASE_ID} (ratio > 1: {RUN_ID} faster)"
    lines = []
    assert gate.compare(RUN_ID, progress=lines.append) == 1  # no base given: the best one, a
    assert lines[0].startswith(f"comparing {RUN_ID} against 20251231T000000Z-a ")


def test_gate_does_not_pair_the_replicates_of_two_runs(runs_dir):
    # Both runs' three replicates sit at 100, 130 and 170 us (the processes differ by 30 %), RUN's
    # each 5 % above BASE's same-numbered one. Replicate r of one run has nothing to do with
    # replicate r of the other: unpaired, each run's log median has the spread of its replicates,
    # S^2 = var(log 100, log 130, log 170) = 0.0705, so SE^2 = 0.0705 / 3 per run, and the ratio's
    # SE is sqrt(2 x 0.0235) = 0.22: an interval of about x/÷ exp(2.8 x 0.22) = 1.8 around 0.952,
    # within noise. Paired, the three ratios would all be 1 / 1.05 and the interval tight: a
    # regression that is an artefact of numbering.
    rng = np.random.default_rng(3)
    base = {r: m * np.exp(rng.normal(0, 0.001, 60)) for r, m in enumerate((100.0, 130.0, 170.0))}
    _gate_run(runs_dir, BASE_ID, {"wmma": base})
    _gate_run(runs_dir, RUN_ID, {"wmma": {r: x * 1.05 for r, x in base.items()}})
    lines = []
    assert gate.compare(RUN_ID, BASE_ID, progress=lines.append) == 0
    assert "within noise" in lines[1]
    lo, hi = (float(x) for x in lines[1].split("[")[1].split("]")[0].split(", "))
    assert lo < 0.7 and hi > 1.3


@pytest.mark.parametrize("dims, label", [
    (dict(B=1, H=8, S=512, D=64, causal=False), "(1,8,512,64) full   hot"),
    (dict(B=1, H=8, S=512, D=64, causal=True), "(1,8,512,64) causal hot"),
    (dict(B=2, H=8, S=512, D=128, causal=True, H_kv=2, dtype="bf16"), "(2,8,512,128,kv2,bf16) causal hot"),
    (dict(B=2, H=8, S=512, D=128, causal=False, H_kv=8, dtype="bf16"), "(2,8,512,128,bf16) full   hot"),
])
def test_gate_prints_each_rows_shape_with_its_model_inputs(runs_dir, dims, label):
    # the K/V heads where they differ from H and the element type where it is not fp16 follow the dims
    _gate_run(runs_dir, BASE_ID, {"wmma": TIGHT}, shape=dims)
    _gate_run(runs_dir, RUN_ID, {"wmma": TIGHT}, shape=dims)
    lines = []
    assert gate.compare(RUN_ID, BASE_ID, progress=lines.append) == 0
    assert lines[1].startswith(f"  {'wmma':<24} {label} ")


def test_gate_needs_a_significant_slowdown_not_only_a_low_ratio(runs_dir):
    code, text = _gate(runs_dir, {"wmma": 0.9}, base=NOISY)  # 8 samples, 50 % spread: an interval across 1
    assert code == 0 and "within noise" in text


@pytest.mark.parametrize("impl", ["sdpa_flash", "flex_attention", "wmma__aa"])
def test_gate_ignores_peers_and_the_aa_twin(runs_dir, impl):
    code, text = _gate(runs_dir, {impl: 0.9, "wmma": 1.0})
    assert code == 0 and "slower" in text


def test_gate_fails_on_a_correctness_failure_even_without_a_slowdown(runs_dir):
    code, text = _gate(runs_dir, {"wmma": 1.0, "tma": 1.0}, failed=("tma",))
    assert code == 1 and "correctness FAILED: tma c" in text
    assert "regressions" not in text


def test_gate_counts_a_case_a_step_does_not_take_as_no_failure(runs_dir):
    """correctness.json records a case a step does not take (its dtype or K/V heads) with passed false
    and why in `unsupported`: neither passed nor failed, so the gate passes."""
    _gate(runs_dir, {"wmma": 1.0, "tma": 1.0})
    rec = records.RunRecord.open(RUN_ID)
    rec.write_json("correctness.json", [{"variant": "wmma", "case": "c", "passed": True},
                                        {"variant": "tma", "case": "c-kv2-bf16", "passed": False,
                                         "unsupported": "not taken: bf16 (this step takes fp16)"}])
    lines = []
    assert gate.compare(RUN_ID, BASE_ID, progress=lines.append) == 0
    assert not any("FAILED" in line for line in lines)


def test_gate_without_a_base_run_fails_only_on_correctness(runs_dir):
    _gate_run(runs_dir, RUN_ID, {"wmma": TIGHT})
    assert gate.compare(RUN_ID, progress=lambda s: None) == 0
    _gate_run(runs_dir, "20260103T000000Z-bad2", {"wmma": TIGHT}, failed=("wmma",), gpu="another GPU")
    assert gate.compare("20260103T000000Z-bad2", progress=lambda s: None) == 1


def test_gate_drops_throttled_samples(runs_dir):
    _gate_run(runs_dir, BASE_ID, {"wmma": TIGHT})
    rec = _gate_run(runs_dir, RUN_ID, {"wmma": TIGHT})
    s = rec.read_table("samples.parquet")
    s.loc[s.index[:150], "latency_us"] *= 1.5  # 150 of 200 samples 50 % slower, but taken while throttled
    s.loc[s.index[:150], "throttled"] = True
    rec.write_table("samples.parquet", s)
    assert gate.compare(RUN_ID, BASE_ID, progress=lambda s: None) == 0


def test_best_base_is_the_fastest_complete_earlier_run_on_the_same_gpu(runs_dir):
    # the runs that must be passed over come first, so that stopping at one would leave no base
    _gate_run(runs_dir, "20260101T000000Z-c", {"wmma": TIGHT * 0.5}, state="incomplete")  # not complete
    _gate_run(runs_dir, "20260102T000000Z-d", {"wmma": TIGHT * 0.6}, gpu="NVIDIA H100")  # another GPU
    _gate_run(runs_dir, "20260103T000000Z-e", {"tma": TIGHT * 0.5})  # no row in common
    _gate_run(runs_dir, "20260104T000000Z-a", {"wmma": TIGHT * 1.2})
    _gate_run(runs_dir, "20260105T000000Z-b", {"wmma": TIGHT * 1.1})
    _gate_run(runs_dir, "20260106T000000Z-f", {"wmma": TIGHT})
    _gate_run(runs_dir, "20260107T000000Z-g", {"wmma": TIGHT * 0.7})  # later than the run compared
    assert gate.best_base("20260106T000000Z-f") == "20260105T000000Z-b"
    assert gate.best_base("20260105T000000Z-b") == "20260104T000000Z-a"
    assert gate.best_base("20260104T000000Z-a") is None  # not itself


def test_best_base_scores_runs_by_the_geometric_mean_over_shared_rows(runs_dir):
    # run a: wmma 2x slower, tma 3x faster than f (geometric mean sqrt(2/3) < 1: faster overall);
    # run b: both 0.9x (geometric mean 0.9): a is the faster base by the geometric mean, b by the
    # arithmetic mean of the ratios (2 + 1/3) / 2 = 1.17 > 0.9
    _gate_run(runs_dir, "20260101T000000Z-a", {"wmma": TIGHT * 2.0, "tma": TIGHT / 3.0})
    _gate_run(runs_dir, "20260102T000000Z-b", {"wmma": TIGHT * 0.9, "tma": TIGHT * 0.9})
    _gate_run(runs_dir, "20260106T000000Z-f", {"wmma": TIGHT, "tma": TIGHT})
    assert gate.best_base("20260106T000000Z-f") == "20260101T000000Z-a"


def test_best_base_compares_each_run_on_its_own_shared_rows(runs_dir):
    # f: wmma 1x, tma 10x. x shares only tma, 0.985 of f's; y shares only wmma, 0.99 of f's. By the
    # ratio x is the better base; by the product of the medians (not the ratio) y would be
    _gate_run(runs_dir, "20260101T000000Z-x", {"tma": TIGHT * 9.85})
    _gate_run(runs_dir, "20260102T000000Z-y", {"wmma": TIGHT * 0.99})
    _gate_run(runs_dir, "20260106T000000Z-f", {"wmma": TIGHT, "tma": TIGHT * 10})
    assert gate.best_base("20260106T000000Z-f") == "20260101T000000Z-x"


def test_best_base_keeps_the_earlier_of_two_equal_runs(runs_dir):
    _gate_run(runs_dir, "20260101T000000Z-a", {"wmma": TIGHT * 0.5})
    _gate_run(runs_dir, "20260102T000000Z-b", {"wmma": TIGHT * 0.5})
    _gate_run(runs_dir, "20260106T000000Z-f", {"wmma": TIGHT})
    assert gate.best_base("20260106T000000Z-f") == "20260101T000000Z-a"


# --- the stop rule a run's parameters give ------------------------------------------------------------

def test_stop_rule_from_a_runs_parameters():
    new = RunParams.from_json(dict(rel_ci=0.004, cap_s=2.5, min_samples=50, stop_guard=[0.99, 3.0])).stop_rule()
    assert new == timing.StopRule(rel_ci=0.004, cap_s=2.5, min_samples=50, guard_confidence=0.99, guard_factor=3.0)
    old = RunParams.from_json(dict(rel_ci=0.005, cap_s=3.0)).stop_rule()  # recorded before min_samples and the guard
    assert (old.min_samples, old.guard_confidence, old.guard_factor) == (20, None, 2.0)
    assert (old.rel_ci, old.cap_s, old.block) == (0.005, 3.0, 10)


@pytest.mark.parametrize("R, min_samples, expected", [
    # each replicate: rel_ci * sqrt(R), cap_s / R, ceil(min_samples / R) samples in blocks of
    # min(10, ceil(that / 2)), at least 1
    (3, 50, (0.004 * math.sqrt(3), 2.5 / 3, 17, 9)),  # ceil(50 / 3) = 17, ceil(17 / 2) = 9
    (2, 50, (0.004 * math.sqrt(2), 1.25, 25, 10)),  # ceil(25 / 2) = 13 > 10: the run's block
    (4, 2, (0.008, 0.625, 1, 1)),  # ceil(2 / 4) = 1, ceil(1 / 2) = 1
    (2, 41, (0.004 * math.sqrt(2), 1.25, 21, 10)),  # ceil(41 / 2) = 21: rounded up, not down
    (3, 20, (0.004 * math.sqrt(3), 2.5 / 3, 7, 4)),  # ceil(20 / 3) = 7, ceil(7 / 2) = 4
])
def test_each_replicate_shares_out_the_runs_budget(R, min_samples, expected):
    p = RunParams(rel_ci=0.004, cap_s=2.5, min_samples=min_samples, replicates=R, stop_guard=(0.99, 3.0),
                  min_blocks=2)
    rule = p.replicate_rule()
    assert (rule.rel_ci, rule.cap_s, rule.min_samples, rule.block) == pytest.approx(expected, rel=1e-12)
    assert rule.block_after_minimum == rule.block  # with two blocks to the minimum: one block size throughout
    assert (rule.guard_confidence, rule.guard_factor) == (0.99, 3.0)  # the guard is the run's
    one = RunParams(rel_ci=0.004, cap_s=2.5, min_samples=min_samples, replicates=1).replicate_rule()
    assert (one.rel_ci, one.cap_s, one.min_samples, one.block) == (0.004, 2.5, min_samples, 10)


@pytest.mark.parametrize("min_blocks, expected_block, expected_after", [
    # 3 replicates of MIN_SAMPLES 50: 17 samples each, in blocks of min(10, ceil(17 / MIN_BLOCKS));
    # after the minimum, blocks of min(10, ceil(17 / 2)) = 9 (never smaller than the first ones)
    (1, 10, 10),  # ceil(17 / 1) = 17 > 10: the run's block
    (2, 9, 9),    # two blocks (9 + 9 = 18 >= 17): the rule of every run before MIN_BLOCKS 6
    (3, 6, 9),    # 6 + 6 + 6 = 18
    (6, 3, 9),    # the default: six blocks of 3
    (17, 1, 9),   # one sample a block
    (50, 1, 9),   # more blocks than samples: still one a block, never 0
])
def test_min_blocks_sets_how_finely_a_replicates_minimum_is_interleaved(min_blocks, expected_block, expected_after):
    p = RunParams(min_samples=50, replicates=3, min_blocks=min_blocks)
    rule = p.replicate_rule()
    assert (rule.min_samples, rule.block, rule.block_after_minimum) == (17, expected_block, expected_after)
    assert [rule.block_size(t) for t in (0, 16, 17, 40)] == [expected_block] * 2 + [expected_after] * 2
    assert math.ceil(17 / rule.block) >= min(min_blocks, 17)  # the minimum takes at least that many turns
    assert RunParams(min_samples=50, replicates=1, min_blocks=min_blocks).replicate_rule().block == 10


def test_min_blocks_is_validated_and_read_back():
    with pytest.raises(ValueError, match=r"MIN_BLOCKS=0: at least 1 and at most --min-samples / MIN_SAMPLES \(50\)"):
        RunParams.from_text(min_blocks="0")
    with pytest.raises(ValueError, match=r"MIN_BLOCKS=51: at least 1"):
        RunParams.from_text(min_blocks="51")
    p = RunParams.from_text(min_blocks="6")
    assert p.min_blocks == 6 and p.as_text()["min_blocks"] == "6"
    assert RunParams.from_json(p.to_json()).min_blocks == 6
    assert RunParams.from_json({k: v for k, v in p.to_json().items() if k != "min_blocks"}).min_blocks == 2


# --- the tuned dispatch's choice -------------------------------------------------------------------

SHORT64 = [(8, 16, 512, 64, False), (4, 16, 256, 64, False)]  # one class, two shapes
LONG128 = [(4, 16, 4096, 128, False)]


def _trials(trial, impl, shapes, ratios, log_half=0.01, status="ok", mode="hot"):
    """Trial rows whose interval is ratio * exp(+-log_half): symmetric in log space, so its
    standard error is log_half / 1.96 (lab.studies.tuning.dispatch._log_se)."""
    return [dict(kind="trial", status=status, mode=mode, trial=trial, impl=impl, B=B, H=H, S=S, D=D, causal=c,
                 config="{}", ratio_to_default=r, ratio_to_default_lo=r * math.exp(-log_half),
                 ratio_to_default_hi=r * math.exp(log_half)) for (B, H, S, D, c), r in zip(shapes, ratios)]


def test_class_scores_combine_the_shapes_as_independent_log_estimates():
    # two shapes at 1.10 and 1.06, each log-interval +-h: geometric mean sqrt(1.10 * 1.06); the mean
    # of two logs with standard errors h / z each has standard error sqrt(2) h / (2 z), so its
    # interval is gm * exp(+-h / sqrt(2))
    h = 0.02
    rows = _trials(0, END, SHORT64, [1.0, 1.0], h) + _trials(1, f"{END}@bc64=64", SHORT64, [1.10, 1.06], h)
    scores = td.class_scores(pd.DataFrame(rows))
    best = scores.iloc[0]
    gm = math.sqrt(1.10 * 1.06)
    assert (best["impl"], best["shape_class"], best["shapes"], best["head_dim"]) == (f"{END}@bc64=64",
                                                                                      "D64-full-short", 2, 64)
    assert best["gm_ratio"] == pytest.approx(gm, rel=1e-12)
    assert best["gm_lo"] == pytest.approx(gm * math.exp(-h / math.sqrt(2)), rel=1e-9)
    assert best["gm_hi"] == pytest.approx(gm * math.exp(h / math.sqrt(2)), rel=1e-9)
    assert list(scores["impl"]) == [f"{END}@bc64=64", END]  # best first


def test_class_scores_take_the_first_measurement_and_only_complete_configurations():
    rows = (_trials(0, END, SHORT64, [1.0, 1.0])
            + _trials(1, f"{END}@bc64=64", SHORT64, [1.04, 1.04])
            + _trials(5, f"{END}@bc64=64", SHORT64, [2.0, 2.0])  # measured again later: not used
            + _trials(2, f"{END}@st64=2", SHORT64[:1], [1.5])  # pruned after one shape
            + _trials(3, f"{END}@st64=3", SHORT64, [3.0, 3.0], mode="cold")  # another mode
            + _trials(4, f"{END}@st64=4", SHORT64, [3.0, 3.0], status="timeout"))
    scores = td.class_scores(pd.DataFrame(rows)).set_index("impl")
    assert sorted(scores.index) == [END, f"{END}@bc64=64"]
    assert scores.at[f"{END}@bc64=64", "gm_ratio"] == pytest.approx(1.04)
    assert scores.at[f"{END}@bc64=64", "trial"] == 1
    assert td.class_scores(pd.DataFrame(rows), mode="cold").iloc[0]["impl"] == f"{END}@st64=3"


def test_class_scores_go_on_past_a_pruned_configuration_and_keep_the_config_text():
    # "<END>@bc64=64" (pruned after one shape) sorts before "<END>@st64=2" (complete)
    rows = (_trials(0, END, SHORT64, [1.0, 1.0]) + _trials(1, f"{END}@bc64=64", SHORT64[:1], [1.5])
            + _trials(2, f"{END}@st64=2", SHORT64, [1.1, 1.1]))
    for r in rows:
        r["config"] = '{"st64": 2}' if r["impl"] == f"{END}@st64=2" else "{}"
    scores = td.class_scores(pd.DataFrame(rows)).set_index("impl")
    assert sorted(scores.index) == [END, f"{END}@st64=2"]
    assert scores.at[f"{END}@st64=2", "config"] == '{"st64": 2}'
    no_config = td.class_scores(pd.DataFrame(rows).drop(columns="config"))
    assert list(no_config["config"]) == ["", ""]


def test_class_scores_without_a_complete_configuration_are_an_empty_table():
    cols = ["shape_class", "impl", "head_dim", "config", "shapes", "gm_ratio", "gm_lo", "gm_hi", "trial"]
    failed = _trials(0, END, SHORT64, [1.0, 1.0], status="timeout")  # no trial ran
    # each configuration measured at one of the class's two shapes: neither is comparable
    pruned = _trials(0, END, SHORT64[:1], [1.0]) + _trials(1, f"{END}@st64=2", SHORT64[1:], [1.1])
    for rows in (failed, pruned):
        scores = td.class_scores(pd.DataFrame(rows))
        assert list(scores.columns) == cols and len(scores) == 0
        assert td.choose_table(pd.DataFrame(rows), run_id="RUN")["classes"] == {}
    # with rows, the same columns, classes in order and each class's best first
    rows = (_trials(0, END, SHORT64 + LONG128, [1.0] * 3) + _trials(1, f"{END}@st64=2", SHORT64, [1.1, 1.1])
            + _trials(2, f"{END}@st128=2", LONG128, [0.9]))
    scores = td.class_scores(pd.DataFrame(rows))
    assert list(scores.columns) == cols
    assert list(zip(scores["shape_class"], scores["impl"])) == [
        ("D128-full-long", END), ("D128-full-long", f"{END}@st128=2"),
        ("D64-full-short", f"{END}@st64=2"), ("D64-full-short", END)]


@pytest.mark.parametrize("lo, hi, se", [
    (math.exp(-0.02), math.exp(0.02), 0.02 / 1.959964),  # log-symmetric: half the log width over z
    (1.0, 1.0, 0.0),  # no width
    (0.0, 1.2, 0.0),  # a lower end of 0: no log scale
    (1.2, 1.1, 0.0),  # reversed
])
def test_a_trials_log_standard_error_from_its_interval(lo, hi, se):
    assert td._log_se({"ratio_to_default_lo": lo, "ratio_to_default_hi": hi}) == pytest.approx(se, rel=1e-6)


@pytest.mark.parametrize("ratio, chosen", [(1.0203, True), (1.0201, False)])
def test_dispatch_chooses_a_configuration_only_when_its_lower_end_is_above_1(ratio, chosen):
    # one shape, log half-width 0.02: lower end = ratio * exp(-0.02), above 1 exactly when
    # ratio > exp(0.02) = 1.0202013
    rows = _trials(0, END, LONG128, [1.0], 0.02) + _trials(1, f"{END}@st128=2", LONG128, [ratio], 0.02)
    table = td.choose_table(pd.DataFrame(rows), run_id="RUN")
    assert ("D128-full-long" in table["classes"]) is chosen
    assert table["considered"]["D128-full-long"].startswith(f"best {END}@st128=2 x")
    if chosen:  # one shape: the class's geometric mean and interval are the shape's own
        entry = table["classes"]["D128-full-long"]
        assert entry == {"impl": f"{END}@st128=2", "defines": {"FA_TILE_STAGES_D128": 2},
                         "ratio": pytest.approx(ratio), "ci_lo": pytest.approx(ratio * math.exp(-0.02)),
                         "ci_hi": pytest.approx(ratio * math.exp(0.02)), "shapes": 1, "trial": 1}


def test_dispatch_needs_the_lower_end_strictly_above_1(monkeypatch):
    # the class scores given as they are, with a lower end of exactly 1.0: "above 1" is not met
    scores = pd.DataFrame([dict(shape_class="D128-full-long", impl=f"{END}@st128=2", head_dim=128, config="{}",
                                shapes=1, gm_ratio=1.05, gm_lo=1.0, gm_hi=1.1, trial=1)])
    monkeypatch.setattr(td, "class_scores", lambda tuning, mode="hot": scores)
    assert td.choose_table(pd.DataFrame(), run_id="RUN")["classes"] == {}
    scores.loc[0, "gm_lo"] = 1.0000001
    assert set(td.choose_table(pd.DataFrame(), run_id="RUN")["classes"]) == {"D128-full-long"}


def test_dispatch_is_chosen_from_the_mode_asked_for():
    # hot: the configuration is no better than the default; cold: clearly better
    rows = (_trials(0, END, LONG128, [1.0], 0.01) + _trials(0, END, LONG128, [1.0], 0.01, mode="cold")
            + _trials(1, f"{END}@st128=2", LONG128, [1.0], 0.01)
            + _trials(1, f"{END}@st128=2", LONG128, [1.2], 0.01, mode="cold"))
    assert td.choose_table(pd.DataFrame(rows), run_id="RUN")["classes"] == {}
    cold = td.choose_table(pd.DataFrame(rows), run_id="RUN", mode="cold")
    assert cold["mode"] == "cold" and cold["classes"]["D128-full-long"]["ratio"] == pytest.approx(1.2)


def test_dispatch_of_a_configuration_of_shared_parameters_takes_its_class_head_dim():
    # a configuration name that sets only a parameter both head dims share (pw, the producer
    # warps) says nothing of D: the class it won (D = 64) gives it
    rows = _trials(0, END, SHORT64, [1.0, 1.0], 0.001) + _trials(1, f"{END}@pw=4", SHORT64, [1.1, 1.1], 0.001)
    entry = td.choose_table(pd.DataFrame(rows), run_id="RUN")["classes"]["D64-full-short"]
    assert entry["impl"] == f"{END}@pw=4" and entry["defines"] == {}  # pw = 4 is the default


def test_dispatch_keeps_the_default_when_the_default_is_best_or_the_best_is_unsure():
    rows = (_trials(0, END, SHORT64 + LONG128, [1.0, 1.0, 1.0], 0.001)
            + _trials(1, f"{END}@bc64=64", SHORT64, [0.9, 0.9], 0.001)  # slower than the default
            # the best ratio has an interval across 1; a smaller, surer gain is not taken instead
            + _trials(2, f"{END}@st128=2", LONG128, [1.05], 0.2)
            + _trials(3, f"{END}@st128=3", LONG128, [1.02], 0.001))
    table = td.choose_table(pd.DataFrame(rows), run_id="RUN")
    assert table["classes"] == {}
    assert table["considered"]["D64-full-short"].startswith(f"best {END} x1.000")
    assert table["considered"]["D128-full-long"].startswith(f"best {END}@st128=2 x1.050")
    assert table["run_id"] == "RUN" and table["mode"] == "hot" and table["variant"] == END



def test_dispatch_is_chosen_in_the_space_of_the_variant_asked_for(monkeypatch):
    """choose_table(variant=...) reads that variant's tunables and names it in the table; without
    one, the manifest's tuned kernel. Another variant's space is stood in for (the manifest has one)."""
    import dataclasses

    from lab.studies.tuning import space as ts

    real, asked = ts.space(), []

    def fake_space(variant=None):
        asked.append(variant)
        return dataclasses.replace(real, variant="other_end") if variant == "other_end" else real

    monkeypatch.setattr(ts, "space", fake_space)
    rows = _trials(0, "other_end", LONG128, [1.0], 0.01) + _trials(1, "other_end@st128=2", LONG128, [1.1], 0.01)
    table = td.choose_table(pd.DataFrame(rows), run_id="RUN", variant="other_end")
    assert asked == ["other_end"] and table["variant"] == "other_end"
    assert table["classes"]["D128-full-long"]["defines"] == {"FA_TILE_STAGES_D128": 2}
    default_rows = _trials(0, END, LONG128, [1.0], 0.01) + _trials(1, f"{END}@st128=2", LONG128, [1.1], 0.01)
    assert td.choose_table(pd.DataFrame(default_rows), run_id="RUN")["variant"] == END and asked[-1] is None

@pytest.mark.parametrize("D, causal, S, cls", [(64, False, 1024, "D64-full-short"), (64, False, 1025, "D64-full-long"),
                                               (128, True, 1, "D128-causal-short"),
                                               (128, True, 16384, "D128-causal-long")])
def test_shape_classes_split_at_1024(D, causal, S, cls):
    assert td.shape_class(D, causal, S) == cls
    table = {"variant": END, "classes": {cls: {"impl": f"{END}@x", "defines": {"A": 1}}}}
    assert td.entry_for(table, D, causal, S) == {"class": cls, "impl": f"{END}@x", "defines": {"A": 1}}
    other = td.shape_class(D, not causal, S)
    assert td.entry_for(table, D, not causal, S) == {"class": other, "impl": END, "defines": {}}
    assert td.entry_for({"variant": "v"}, D, causal, S) == {"class": cls, "impl": "v", "defines": {}}  # no classes


# --- speedup_ci on samples of unequal sizes -----------------------------------------------------------

def test_speedup_ci_of_unequal_sizes_has_the_ratio_of_the_constructed_medians():
    a = np.arange(1.0, 22.0)  # 21 samples, median 11 (the 11th)
    b = np.concatenate([np.full(29, 20.0), [21.0, 23.0], np.full(29, 30.0)])  # 60 samples, median (21 + 23) / 2
    ci = stats.speedup_ci(a, b, n_resamples=500)
    assert ci.ratio == 2.0
    assert ci.method in ("BCa", "percentile") and ci.lo < 2.0 < ci.hi
    back = stats.speedup_ci(b, a, n_resamples=500)
    assert back.ratio == 0.5


def test_speedup_ci_width_of_unequal_sizes_matches_the_large_sample_theory():
    # The median of n lognormal(sigma) samples has log-scale standard error sqrt(pi / 2) sigma /
    # sqrt(n); the log ratio of two independent medians has the root sum of squares. n = 40 against
    # 400, sigma = 0.05: se = 0.05 * 1.2533 * sqrt(1/40 + 1/400) = 0.010392, a 95 % half-width of
    # 0.02037 in log space. Averaged over 20 draws, the bootstrap's half-width is within 20 % of it;
    # resampling the two as pairs (equal sizes) or only the larger one would be far off.
    expected = 1.959964 * 0.05 * math.sqrt(math.pi / 2) * math.sqrt(1 / 40 + 1 / 400)
    halves = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        a = 50.0 * np.exp(rng.normal(0, 0.05, 40))
        b = 75.0 * np.exp(rng.normal(0, 0.05, 400))
        ci = stats.speedup_ci(a, b, n_resamples=1000, seed=seed)
        assert ci.method == "BCa"
        halves.append((math.log(ci.hi) - math.log(ci.lo)) / 2)
    assert np.mean(halves) == pytest.approx(expected, rel=0.2)


def _held(cls, config, lo, hi, status="ok"):
    return dict(status=status, shape_class=cls, config=config, ratio_to_default=(lo + hi) / 2,
                ratio_to_default_lo=lo, ratio_to_default_hi=hi)


@pytest.mark.parametrize("lo, hi, want", [(1.001, 1.02, "faster"), (1.0, 1.02, "no difference"),
                                          (0.98, 0.999, "slower"), (0.98, 1.0, "no difference")])
def test_a_held_out_shape_is_faster_only_when_its_interval_lies_above_1(lo, hi, want):
    assert td.heldout_verdict(lo, hi) == want


def test_the_committed_table_drops_a_class_its_held_out_shapes_call_overfitted():
    """A class whose configuration is faster on none of its held-out shapes keeps the default;
    one faster on at least one stays; one without held-out shapes stays (not validated); rows that
    failed or time the default against itself decide nothing."""
    entry = lambda impl: {"impl": impl, "defines": {"X": 1}, "ratio": 1.02, "ci_lo": 1.01, "ci_hi": 1.03}  # noqa: E731
    table = {"variant": END, "considered": {}, "classes": {
        "D128-causal-short": entry(f"{END}@bc128=64"), "D64-full-short": entry(f"{END}@st64=2"),
        "D64-causal-long": entry(f"{END}@wgs64=2")}}
    held = pd.DataFrame([
        _held("D128-causal-short", f"{END}@bc128=64", 0.95, 0.96),     # slower
        _held("D128-causal-short", f"{END}@bc128=64", 0.99, 1.01),     # no difference
        _held("D128-causal-short", f"{END}@bc128=64", 1.2, 1.3, status="error"),  # failed: no verdict
        _held("D64-full-short", f"{END}@st64=2", 0.97, 0.98),          # slower ...
        _held("D64-full-short", f"{END}@st64=2", 1.001, 1.01),         # ... and faster: validated
        _held("D128-full-long", END, 1.05, 1.06),                 # the default against itself
    ])
    out = td.without_overfitted(table, held)
    assert set(out["classes"]) == {"D64-full-short", "D64-causal-long"}
    assert out["considered"]["D128-causal-short"].endswith("overfitted, default kept")
    assert out["considered"]["D128-causal-short"].startswith(f"{END}@bc128=64 x1.020 [1.010, 1.030]")
    assert set(table["classes"]) == {"D128-causal-short", "D64-full-short", "D64-causal-long"}  # input untouched
    assert td.without_overfitted(table, pd.DataFrame())["classes"] == table["classes"]  # no held-out run: as chosen


def test_held_out_verdicts_per_row_and_per_class():
    """Rows: a configuration's interval decides 'faster' / 'slower' / 'no difference'; a row timing
    the default against itself is an A/A row and never makes its class 'validated'. Classes of the
    table only: validated (some row faster), overfitted (none), not validated (no row)."""
    table = {"variant": END, "classes": {"D128-causal-short": {}, "D64-full-short": {}, "D64-causal-long": {}}}
    held = pd.DataFrame([
        _held("D128-causal-short", END, 1.02, 1.04),             # A/A, faster by chance
        _held("D128-causal-short", END, 0.99, 1.01),             # A/A, no difference
        _held("D128-causal-short", f"{END}@bc128=64", 0.95, 0.96),
        _held("D64-full-short", f"{END}@st64=2", 1.001, 1.01),
        _held("D64-full-short", f"{END}@st64=2", 1.5, 1.6, status="timeout"),
    ])
    rows, classes = td.heldout_verdicts(held, table)
    assert list(rows["verdict"]) == ["same kernel: A/A (faster)", "same kernel: A/A (no difference)", "slower", "faster"]
    assert classes == {"D128-causal-short": "overfitted", "D64-full-short": "validated", "D64-causal-long": "not validated"}
    assert td.heldout_verdicts(held, {"variant": END})[1] == {}  # a table without classes
    # held-out rows recorded without a config column (older tuning runs): judged by their intervals alone
    rows, classes = td.heldout_verdicts(held.drop(columns="config"), table)
    assert list(rows["verdict"]) == ["faster", "no difference", "slower", "faster"]
    assert classes["D128-causal-short"] == "validated"
    # the A/A rows do not rescue the overfitted class, and a table without `considered` gets one
    out = td.without_overfitted({"variant": END, "classes": {
        "D128-causal-short": {"impl": f"{END}@bc128=64", "ratio": 1.01, "ci_lo": 1.005, "ci_hi": 1.015}}}, held)
    assert out["classes"] == {} and list(out["considered"]) == ["D128-causal-short"]
