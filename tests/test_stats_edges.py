"""lab.measure.stats at the edges its known-answer tests (test_stats.py) leave open (issue 20): what each
function refuses and how it names the argument, degenerate medians and samples, the fallbacks,
and the defaults the report and the gate rely on (bootstrap seed 0, 2000 resamples, 95 %).
Expected values by hand or from scipy's own functions, never from lab.measure.stats itself.
"""

import math
import warnings

import numpy as np
import pytest
import scipy.stats as scipy_stats

from lab.measure import stats

GOOD = [1.0, 2.0, 3.0]


@pytest.mark.parametrize("call, message", [
    (lambda: stats.summarize([]), "latencies_us must be non-empty"),
    (lambda: stats.summarize([1.0, math.nan]), "latencies_us must contain only finite values"),
    (lambda: stats.median_ci([]), "samples must be non-empty"),
    (lambda: stats.median_ci(GOOD, 1.0), r"confidence must be in \(0, 1\)"),
    (lambda: stats.median_ci(GOOD, 0.0), r"confidence must be in \(0, 1\)"),
    (lambda: stats.relative_ci_halfwidth([math.inf]), "samples must contain only finite values"),
    (lambda: stats.speedup_ci([0.0, 1.0], GOOD), "a_us must be strictly positive latencies"),
    (lambda: stats.speedup_ci(GOOD, [-1.0]), "b_us must be strictly positive latencies"),
    (lambda: stats.compare([], GOOD), "a_us must be non-empty"),
    (lambda: stats.compare(GOOD, [0.0]), "b_us must be strictly positive latencies"),
    (lambda: stats.cliffs_delta([], GOOD), "a must be non-empty"),
    (lambda: stats.cliffs_delta(GOOD, []), "b must be non-empty"),
    (lambda: stats.mann_whitney_p([math.nan], GOOD), "a must contain only finite values"),
    (lambda: stats.mann_whitney_p(GOOD, []), "b must be non-empty"),
    (lambda: stats.hodges_lehmann_log_ratio([0.0], GOOD), "a must be strictly positive latencies"),
    (lambda: stats.hodges_lehmann_log_ratio(GOOD, [-2.0]), "b must be strictly positive latencies"),
    (lambda: stats.benjamini_hochberg([0.5, 1.0000001]), r"p-values must be in \[0, 1\]"),
    (lambda: stats.benjamini_hochberg([-1e-9, 0.5]), r"p-values must be in \[0, 1\]"),
    (lambda: stats.tflops(1, 1, 64, 64, False, 0.0), "median_us must be positive"),
    (lambda: stats.effective_gbps(1, 1, 64, 64, 0.0), "median_us must be positive"),
    (lambda: stats.effective_gbps(1, 1, 64, 64, -1.0), "median_us must be positive"),
])
def test_refusals_name_the_argument_and_the_rule(call, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        call()


def test_p_values_of_exactly_0_and_1_are_valid():
    # BH by hand, m = 3: sorted .0, .5, 1.0 -> .0 * 3, .5 * 3 / 2, 1.0 -> 0, .75, 1
    np.testing.assert_allclose(stats.benjamini_hochberg([1.0, 0.0, 0.5]), [1.0, 0.0, 0.75])
    np.testing.assert_allclose(stats.benjamini_hochberg([1, 0]), [1.0, 0.0])  # integers are p-values too


def test_relative_halfwidth_of_a_non_positive_median_is_infinite():
    assert stats.relative_ci_halfwidth([-1.0, 0.0, 1.0]) == math.inf
    assert stats.relative_ci_halfwidth([-3.0, -2.0, -1.0]) == math.inf
    # a sub-microsecond median is a median like any other: n = 5 < 6, so the interval is the range
    assert stats.relative_ci_halfwidth([0.4, 0.45, 0.5, 0.55, 0.7]) == pytest.approx(0.2 / 0.5)


def test_median_interval_of_tiny_samples():
    # n < 6 at 95 %: no pair of order statistics reaches the coverage; (min, max) is returned
    for n in range(1, 6):
        x = np.arange(1.0, n + 1)
        assert stats.median_ci(x) == (1.0, float(n))
    # at 1 % (tail 0.495), n = 4: P(Bin(4, 1/2) <= 1) = 5/16 <= 0.495 < P(<= 2) = 11/16, so r = 2:
    # the middle pair (x_2, x_3); n = 3: P(<= 0) = 1/8 <= 0.495 < P(<= 1) = 1/2, so r = 1
    assert stats.median_ci([4.0, 2.0, 3.0, 1.0], 0.01) == (2.0, 3.0)
    assert stats.median_ci([5.0, 1.0, 3.0], 0.01) == (1.0, 5.0)


def test_median_interval_keeps_a_pair_whose_coverage_equals_the_confidence_exactly():
    # n = 6: P(Bin(6, 1/2) <= 1) = 7/64, so the pair (x_2, x_5) covers 1 - 14/64 = 0.78125 exactly;
    # asked for 0.78125 (exact in binary) it qualifies ("at least"), though the tail it is compared
    # with is the same number computed another way
    assert stats.median_ci(np.arange(1.0, 7.0), 0.78125) == (2.0, 5.0)
    assert stats.median_ci(np.arange(1.0, 7.0), 0.79) == (1.0, 6.0)


@pytest.mark.parametrize("a, b", [
    ([10.0, 11.0, 10.5, 10.2, 10.9, 10.1, 10.7], [12.0] * 7),  # A varies (a range of exactly 1), B constant
    ([12.0] * 7, [10.0, 11.0, 10.5, 10.2, 10.9, 10.1, 10.7]),  # B varies by exactly 1
])
def test_an_interval_has_width_when_either_sample_varies(a, b):
    ci = stats.speedup_ci(a, b)
    assert ci.method != "exact" and ci.lo < ci.ratio < ci.hi


def test_one_constant_sample_still_gets_an_interval():
    # only B varies: the ratio's sampling variability is B's median's, so the interval has width
    a = np.full(40, 10.0)
    b = 20.0 * np.exp(np.random.default_rng(0).normal(0, 0.05, 40))
    ci = stats.speedup_ci(a, b, n_resamples=500)
    assert ci.method in ("BCa", "percentile") and ci.lo < ci.ratio < ci.hi
    assert ci.ratio == np.median(b) / 10.0
    both = stats.speedup_ci(np.full(5, 4.0), np.full(7, 6.0))
    assert (both.ratio, both.lo, both.hi, both.method) == (1.5, 1.5, 1.5, "exact")


def test_percentile_fallback_needs_a_non_degenerate_interval(monkeypatch):
    # BCa fails and the percentile interval has zero width: no variability to express ("exact")
    calls = []

    def fake(data, statistic, method, **kw):
        calls.append(method)
        if method == "BCa":
            raise ValueError("boom")
        ratio = float(statistic(*data))

        class Res:
            confidence_interval = type("CI", (), {"low": ratio, "high": ratio})

        return Res()

    monkeypatch.setattr(scipy_stats, "bootstrap", fake)
    ci = stats.speedup_ci([1.0, 2.0, 3.0], [2.0, 4.0, 6.0])
    assert calls == ["BCa", "percentile"] and ci == stats.SpeedupCI(2.0, 2.0, 2.0, "exact")


def test_an_inverted_or_infinite_bootstrap_interval_is_rejected(monkeypatch):
    results = iter([(1.2, 1.1), (0.9, math.inf)])

    def fake(data, statistic, method, **kw):
        lo, hi = next(results)
        return type("Res", (), {"confidence_interval": type("CI", (), {"low": lo, "high": hi})})()

    monkeypatch.setattr(scipy_stats, "bootstrap", fake)
    ci = stats.speedup_ci([1.0, 2.0, 3.0], [2.0, 4.0, 6.0])
    assert ci == stats.SpeedupCI(2.0, 2.0, 2.0, "exact")


def test_the_bootstrap_is_two_independent_samples_at_the_confidence_asked(monkeypatch):
    seen = {}
    real = scipy_stats.bootstrap

    def spy(data, statistic, **kw):
        seen.update(kw, n=[len(d) for d in data])
        return real(data, statistic, **kw)

    monkeypatch.setattr(scipy_stats, "bootstrap", spy)
    a, b = np.linspace(1, 2, 30), np.linspace(2, 3, 45)
    stats.speedup_ci(a, b, confidence=0.9, n_resamples=300, seed=4)
    assert seen["n"] == [30, 45] and seen["paired"] is False and seen["vectorized"] is True
    assert seen["confidence_level"] == 0.9 and seen["n_resamples"] == 300 and seen["method"] == "BCa"
    # the statistic is the ratio of medians along the last axis (vectorized over resamples)
    x = np.array([[1.0, 2.0, 9.0], [2.0, 2.0, 2.0]])
    y = np.array([[4.0, 4.0, 4.0], [1.0, 3.0, 8.0]])
    np.testing.assert_allclose(stats.bootstrap._ratio_of_medians(x, y), [2.0, 1.5])


def test_degenerate_data_warnings_fall_back_and_do_not_leak():
    a = np.array([5.0] * 39 + [6.0])  # almost all tied: BCa's acceleration is 0/0
    b = np.array([10.0] * 39 + [11.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ci = stats.speedup_ci(a, b, n_resamples=300)
    assert ci.ratio == 2.0 and ci.lo <= 2.0 <= ci.hi


def test_mann_whitney_silences_only_runtime_warnings(monkeypatch):
    real = scipy_stats.mannwhitneyu

    def noisy(*a, **k):
        warnings.warn("0/0 in the variance", RuntimeWarning)
        warnings.warn("something else", UserWarning)
        return real(*a, **k)

    monkeypatch.setattr(scipy_stats, "mannwhitneyu", noisy)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        stats.mann_whitney_p(GOOD, [4.0, 5.0, 6.0])
    assert [w.category for w in seen] == [UserWarning]


def test_mann_whitney_nan_means_no_evidence(monkeypatch):
    class Res:
        pvalue = math.nan
        statistic = 0.0

    monkeypatch.setattr(scipy_stats, "mannwhitneyu", lambda *a, **k: Res())
    assert stats.mann_whitney_p(GOOD, GOOD) == 1.0


def test_hodges_lehmann_uses_every_pair_up_to_the_limit(monkeypatch):
    # 10 x 10 = 100 pairs: with the limit at 100 every pair counts (the exact median of the
    # differences); at 99 a random subsample of 99 pairs (with repeats) stands in
    la = np.log(np.arange(1.0, 11.0))
    lb = np.log(np.arange(1.0, 11.0) * 1.7)
    exact = float(np.median((la[:, None] - lb[None, :]).ravel()))
    monkeypatch.setattr(stats.ranks, "_HL_MAX_PAIRS", 100)
    assert stats.hodges_lehmann_log_ratio(np.exp(la), np.exp(lb)) == pytest.approx(exact, abs=1e-12)
    assert exact == pytest.approx(-math.log(1.7))
    monkeypatch.setattr(stats.ranks, "_HL_MAX_PAIRS", 99)
    sub = [stats.hodges_lehmann_log_ratio(np.exp(la), np.exp(lb), seed=s) for s in range(5)]
    assert len(set(sub)) > 1  # the seed picks the pairs
    assert stats.hodges_lehmann_log_ratio(np.exp(la), np.exp(lb), seed=3) == sub[3]


def test_compare_passes_its_band_alpha_and_seed_through(monkeypatch):
    rng = np.random.default_rng(7)
    a, b = 10 * np.exp(rng.normal(0, 0.05, 50)), 11 * np.exp(rng.normal(0, 0.05, 60))
    c = stats.compare(a, b, noise_band=0.03, alpha=0.1, seed=5, n_resamples=300)
    assert (c.noise_band, c.alpha) == (0.03, 0.1)
    assert c.speedup == stats.speedup_ci(a, b, confidence=0.9, n_resamples=300, seed=5)
    assert c.p_value == c.p_adjusted == scipy_stats.mannwhitneyu(a, b, alternative="two-sided").pvalue
    # the report and the gate rely on the defaults: a 95 % interval, 2000 resamples, seed 0
    d = stats.compare(a, b)
    assert (d.noise_band, d.alpha) == (0.01, 0.05)
    assert d.speedup == stats.speedup_ci(a, b, 0.95, 2000, 0)
    rows = stats.compare_rows([(a, b)], noise_band=0.03, alpha=0.1)
    assert (rows[0].noise_band, rows[0].alpha) == (0.03, 0.1)
    assert rows[0].speedup == stats.speedup_ci(a, b, 0.9, 2000, 0)
    # the Hodges-Lehmann subsample is seeded by compare's seed (and by 0 unless told)
    monkeypatch.setattr(stats.ranks, "_HL_MAX_PAIRS", 500)
    hl = {s: stats.hodges_lehmann_log_ratio(a, b, seed=s) for s in (0, 2, 3)}
    assert hl[2] != hl[3] and stats.hodges_lehmann_log_ratio(a, b) == hl[0]
    assert stats.compare(a, b, seed=2, n_resamples=100).hl_log_ratio == hl[2]
    assert stats.compare(a, b, seed=3, n_resamples=100).hl_log_ratio == hl[3]


def test_throughput_by_hand_to_the_last_digit():
    # 4 B H S^2 D FLOP (halved if causal) over the time; 4 B H S D elements of 2 bytes moved
    assert stats.tflops(2, 3, 1000, 64, False, 2.0) == pytest.approx(4 * 2 * 3 * 1000 ** 2 * 64 / 2e-6 / 1e12,
                                                                     rel=1e-14)
    assert stats.tflops(2, 3, 1000, 64, True, 2.0) == pytest.approx(2 * 2 * 3 * 1000 ** 2 * 64 / 2e-6 / 1e12,
                                                                    rel=1e-14)
    assert stats.effective_gbps(2, 3, 1000, 64, 2.0) == pytest.approx(4 * 2 * 3 * 1000 * 64 * 2 / 2e-6 / 1e9,
                                                                      rel=1e-14)
    assert stats.effective_gbps(2, 3, 1000, 128, 2.0, bytes_per_elem=4) == pytest.approx(
        4 * 2 * 3 * 1000 * 128 * 4 / 2e-6 / 1e9, rel=1e-14)
    # grouped K/V heads: Q and O of 8 heads, K and V of 2 heads: 2 * 2 * (8 + 2) * 1000 * 64 * 2 bytes
    # = 5.12 MB in 2 us = 2560 GB/s (as many K/V heads as query heads would be 4096 GB/s)
    assert stats.effective_gbps(2, 8, 1000, 64, 2.0, H_kv=2) == pytest.approx(2560.0, rel=1e-14)
    assert stats.effective_gbps(2, 8, 1000, 64, 2.0) == pytest.approx(4096.0, rel=1e-14)
    assert stats.tflops(1, 1, 1024, 64, False, 1.0) == 268.435456  # 2^28 / 1e6, exactly representable digits
