"""Rules that decide a verdict or a coverage, at their edges (issue 48: one-line bugs here survived
every test). Each expectation is written from the rule's words, not from the code:

- the models section counts a row "at or above" a peer only where the interval's lower end is
  strictly above LOWER_END (0.99);
- a left-out replicate's point is covered where lo <= point <= hi: at either end it is, just below
  or above it is not;
- a run's calibration is the mean over every (ratio, replicate left out) of the burst modes, at the
  ladder shapes, over the replicates the two rows share (at least three), throttled samples left out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lab.kernels.shape import Shape
from lab.measure import stats
from lab.measure.stats import SpeedupCI
from lab.report import models


def _ci(lo, ratio=None, hi=None):
    ratio = ratio if ratio is not None else lo * 1.01
    return SpeedupCI(ratio=ratio, lo=lo, hi=hi if hi is not None else ratio * 1.01, method="t")


SHAPE = Shape(1, 32, 8192, 128, True, 8, "bf16")


@pytest.mark.parametrize("lower_ends, counted", [
    ([0.99, 0.99], 0),          # at the edge: not above it
    ([0.9901, 0.99], 1),
    ([1.2, 0.9899], 1),
    ([0.995, 1.001], 2),
])
def test_a_models_row_is_at_or_above_only_with_its_lower_end_above_the_edge(lower_ends, counted):
    rows = [dict(kernel="k", shape=SHAPE, vs_peer=_ci(lo), vs_flex=_ci(lo), vs_fp16=None) for lo in lower_ends]
    (line,) = models.verdicts(rows)
    assert f"at or above the fastest peer (interval's lower end above {models.LOWER_END}) at {counted} of 2 " in line
    assert f"at or above {models.FLEX} at {counted} of 2" in line


def test_the_worst_bf16_row_is_named():
    rows = [dict(kernel="k", shape=Shape(1, 32, S, 128, True, 8, "bf16"), vs_peer=_ci(1.0), vs_flex=None,
                 vs_fp16=_ci(lo, ratio=r)) for S, lo, r in ((2048, 0.97, 0.98), (8192, 0.95, 0.96))]
    (line,) = models.verdicts(rows)
    assert line.endswith("; bf16 at 0.960× [0.950, 0.970] the speed of fp16 at worst, at "
                         "(1, 32, 8192, 128, causal, kv8, bf16).")


@pytest.mark.parametrize("point, covered", [(0.9999, False), (1.0, True), (1.1, True), (1.2, True), (1.2001, False)])
def test_a_left_out_point_is_covered_from_the_lower_end_to_the_upper_end(point, covered, monkeypatch):
    """The held-in interval fixed at [1.0, 1.2]; replicate 0's point placed by hand (its ratio of
    medians: B's median over A's)."""
    monkeypatch.setattr(stats.replicated, "replicated_speedup_ci",
                        lambda a, b, *args, **kw: SpeedupCI(1.1, 1.0, 1.2, "t", replicates=2, se_log=0.01, df=4))
    a = {r: np.full(5, 100.0) for r in range(3)}
    b = {0: np.full(5, 100.0 * point), 1: np.full(5, 110.0), 2: np.full(5, 110.0)}
    got = {g["left_out"]: g for g in stats.leave_one_out(a, b)}
    assert got[0]["point"] == pytest.approx(point)
    assert got[0]["covered"] is covered


# --- a run's calibration, from its samples -------------------------------------------------------

LADDER = Shape(4, 16, 512, 64, False)
TAILS = Shape(2, 16, 8192, 128, False)


class _Params:
    """What leave_one_out_run reads of RunParams: the shapes' scopes, the modes, the variants."""
    scopes = {LADDER: "ladder", TAILS: "tails"}
    modes = ("hot", "cold", "sustained")
    variants = ("baseline", "restrict", "coalesced")


def _samples(seed=0):
    rng = np.random.default_rng(seed)
    rows = []

    def add(impl, shape, mode, replicates, median, throttled=False, n=12):
        for r in replicates:
            shift = rng.normal(0, 0.01)
            for k, x in enumerate(median * np.exp(shift + rng.normal(0, 0.005, n))):
                rows.append(dict(impl=impl, B=shape.B, H=shape.H, S=shape.S, D=shape.D, causal=shape.causal,
                                 H_kv=shape.H_kv, dtype="float16", mode=mode, sample=k, latency_us=float(x),
                                 throttled=throttled, replicate=r))

    for mode in ("hot", "cold", "sustained"):
        add("baseline", LADDER, mode, range(3), 100.0)
        add("restrict", LADDER, mode, range(3), 95.0)
        add("coalesced", LADDER, mode, (0, 1), 60.0)        # two replicates in common with restrict: left out
        add("baseline", TAILS, mode, range(3), 900.0)       # not a ladder shape
        add("restrict", TAILS, mode, range(3), 850.0)
    add("restrict", LADDER, "hot", range(3), 1e6, throttled=True, n=3)  # throttled: never read
    return pd.DataFrame(rows)


def test_a_runs_calibration_is_the_mean_over_every_ratio_and_replicate_left_out(monkeypatch):
    from lab.measure import records
    from lab.studies import calibration

    samples = _samples(seed=19)  # a draw where one point is outside its interval but inside the prediction one
    monkeypatch.setattr(calibration.parallel, "starmap", lambda fn, args: [fn(*a) for a in args])
    got = calibration.leave_one_out_run(samples, _Params(), n_resamples=200, seed=3)

    # what it should be, row by row: restrict over baseline at the ladder shape, hot and cold only
    kept = samples[~samples["throttled"]]
    lat = records.replicates_by_row(kept)
    rows = [r for mode in ("hot", "cold") for r in stats.leave_one_out(
        lat[("restrict", LADDER, mode)], lat[("baseline", LADDER, mode)], 0.95, n_resamples=200, seed=3)]
    assert len({np.mean([r[k] for r in rows]) for k in ("covered", "pred_covered", "expected_covered")}) == 3, \
        "the data tells the three fractions apart (else swapping two would go unseen)"
    assert got["applicable"] and got["replicates"] == 3
    assert (got["ratios"], got["points"]) == (2, 6)
    for key in ("covered", "pred_covered", "expected_covered", "by_round"):
        assert got[key] == pytest.approx(np.mean([r[key] for r in rows])), key
    assert {(r["step"], r["parent"], r["mode"]) for r in got["rows"]} == {("restrict", "baseline", "hot"),
                                                                           ("restrict", "baseline", "cold")}


def test_a_run_with_two_replicates_or_no_shared_rows_is_not_calibrated(monkeypatch):
    from lab.studies import calibration

    monkeypatch.setattr(calibration.parallel, "starmap", lambda fn, args: [fn(*a) for a in args])
    two = _samples()
    two = two[two["replicate"] < 2]
    got = calibration.leave_one_out_run(two, _Params(), n_resamples=50)
    assert not got["applicable"] and got["reason"].startswith("this run has 2 replicates")
    apart = _samples()
    apart = apart[~((apart["impl"] == "restrict") & (apart["replicate"] == 0))]  # restrict misses replicate 0
    got = calibration.leave_one_out_run(apart, _Params(), n_resamples=50)
    assert not got["applicable"] and got["reason"] == "no two rows measured in common replicates"


def test_a_runs_calibration_names_its_pairs_and_confidence_and_skips_a_step_never_measured(monkeypatch):
    """The summary says which ratios it is over and at what confidence; a step with no samples at the
    shape (coalesced here) is passed over, not an error."""
    from lab.studies import calibration

    monkeypatch.setattr(calibration.parallel, "starmap", lambda fn, args: [fn(*a) for a in args])
    samples = _samples()
    got = calibration.leave_one_out_run(samples[samples["impl"] != "coalesced"], _Params(), confidence=0.9,
                                        n_resamples=50)
    assert got["applicable"] and (got["ratios"], got["points"]) == (2, 6)
    assert got["confidence"] == 0.9
    assert got["pairs"] == "every step against its parent, at every ladder shape and mode where both were measured"


def test_a_runs_calibration_over_rounds_counts_every_point_compared_round_by_round(monkeypatch):
    """With each sample's round recorded, every left-out point is a round-by-round ratio: by_round 1.0,
    the fraction of points, never more than one."""
    from lab.studies import calibration

    monkeypatch.setattr(calibration.parallel, "starmap", lambda fn, args: [fn(*a) for a in args])
    samples = _samples().assign(round=lambda d: d["sample"] // 3)
    got = calibration.leave_one_out_run(samples, _Params(), n_resamples=50)
    assert got["points"] == 6 and got["by_round"] == 1.0


@pytest.mark.parametrize("replicates, reason", [
    ((), "this run has 0 replicates; leaving one out needs at least 3"),
    ((0,), "this run has 1 replicate; leaving one out needs at least 3"),
])
def test_too_few_replicates_are_counted_in_words(replicates, reason, monkeypatch):
    from lab.studies import calibration

    samples = _samples()
    got = calibration.leave_one_out_run(samples[samples["replicate"].isin(replicates)], _Params(), n_resamples=50)
    assert not got["applicable"] and got["reason"] == reason and got["replicates"] == len(replicates)
