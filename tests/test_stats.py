"""Known-answer tests for lab.measure.stats (CPU only, fast)."""

import ast
import math
import pathlib
import sys
import warnings

import numpy as np
import pytest
import scipy.stats as scipy_stats

# Allow running as plain `pytest` from anywhere (no conftest in this repo).
_ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from lab.measure import stats  # noqa: E402
from lab.measure.stats import (  # noqa: E402
    Comparison,
    SpeedupCI,
    benjamini_hochberg,
    cliffs_delta,
    compare,
    compare_rows,
    effective_gbps,
    hodges_lehmann_log_ratio,
    mann_whitney_p,
    median_ci,
    relative_ci_halfwidth,
    speedup_ci,
    summarize,
    tflops,
)


def _lognormal(rng, n, median=100.0, sigma=0.1):
    return np.exp(rng.normal(math.log(median), sigma, n))


# ---------------------------------------------------------------- summarize


def test_summarize_known_array():
    s = summarize(np.arange(1, 11, dtype=float))
    assert s["n"] == 10 and isinstance(s["n"], int)
    assert s["median_us"] == pytest.approx(5.5)
    assert s["p10_us"] == pytest.approx(1.9)
    assert s["p90_us"] == pytest.approx(9.1)
    assert s["iqr_us"] == pytest.approx(7.75 - 3.25)
    assert s["mean_us"] == pytest.approx(5.5)
    assert s["min_us"] == pytest.approx(1.0)
    assert set(s) == {"n", "median_us", "p10_us", "p90_us", "iqr_us", "mean_us", "min_us"}
    assert all(isinstance(v, float) for k, v in s.items() if k != "n")


def test_summarize_rejects_empty():
    with pytest.raises(ValueError):
        summarize([])


# ---------------------------------------------------------------- median CI


def test_median_ci_known_ranks():
    # Classic table value: n=100, 95% -> order statistics 40 and 61.
    assert median_ci(np.arange(1, 101, dtype=float)) == (40.0, 61.0)
    # Too few points for 95%: full range.
    assert median_ci([3.0, 1.0, 2.0]) == (1.0, 3.0)


def test_median_ci_brackets_and_shrinks():
    rng = np.random.default_rng(1)
    widths = []
    for n in (20, 200, 2000):
        x = _lognormal(rng, n)
        lo, hi = median_ci(x)
        assert lo <= np.median(x) <= hi
        widths.append(hi - lo)
    assert widths[0] > widths[1] > widths[2]


def test_median_ci_coverage():
    # Distribution-free and conservative: coverage >= ~95%.
    hits = 0
    for seed in range(400):
        x = np.random.default_rng(seed).exponential(1.0, 50)
        lo, hi = median_ci(x)
        hits += lo <= math.log(2) <= hi
    assert 0.93 <= hits / 400 <= 1.0


def test_relative_ci_halfwidth():
    x = np.arange(1, 101, dtype=float)  # median 50.5, CI (40, 61)
    assert relative_ci_halfwidth(x) == pytest.approx(10.5 / 50.5)
    tight = 100.0 + np.random.default_rng(0).normal(0, 0.01, 5000)
    assert relative_ci_halfwidth(tight) < 0.005  # stopping rule satisfied


# ---------------------------------------------------------------- speedup CI


def test_speedup_ci_coverage_lognormal():
    true_ratio = 1.3  # b = 1.3 * (a's distribution) -> median(b)/median(a) = 1.3
    n_seeds, hits = 200, 0
    for seed in range(n_seeds):
        rng = np.random.default_rng(10_000 + seed)
        a = _lognormal(rng, 60)
        b = true_ratio * _lognormal(rng, 60)
        ci = speedup_ci(a, b, n_resamples=500, seed=seed)
        assert ci.lo <= ci.hi
        hits += ci.lo <= true_ratio <= ci.hi
    assert 0.88 <= hits / n_seeds <= 0.99


def test_speedup_ci_direction_and_type():
    rng = np.random.default_rng(3)
    a = _lognormal(rng, 80, median=50.0, sigma=0.02)
    b = _lognormal(rng, 80, median=100.0, sigma=0.02)
    ci = speedup_ci(a, b, n_resamples=500)
    assert isinstance(ci, SpeedupCI)
    assert ci.method == "BCa"
    assert ci.ratio == pytest.approx(np.median(b) / np.median(a))
    assert 1.9 < ci.lo <= ci.ratio <= ci.hi < 2.1  # A ~2x faster


def test_speedup_ci_deterministic():
    rng = np.random.default_rng(5)
    a, b = _lognormal(rng, 60), _lognormal(rng, 60, median=110.0)
    c1 = speedup_ci(a, b, n_resamples=500, seed=7)
    c2 = speedup_ci(a, b, n_resamples=500, seed=7)
    c3 = speedup_ci(a, b, n_resamples=500, seed=8)
    assert c1 == c2
    assert (c1.lo, c1.hi) != (c3.lo, c3.hi)


def test_speedup_ci_all_identical():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warnings leak out either
        ci = speedup_ci(np.full(50, 7.0), np.full(50, 7.0))
        cmp_ = compare(np.full(50, 7.0), np.full(50, 7.0))
    assert ci.method in ("percentile", "exact")
    assert ci.ratio == 1.0 and ci.lo == 1.0 and ci.hi == 1.0
    assert cmp_.verdict() == "within noise"
    assert cmp_.cliffs_delta == 0.0
    assert cmp_.p_value == 1.0


def test_speedup_ci_heavily_tied_does_not_raise():
    rng = np.random.default_rng(0)
    for _ in range(5):
        a = np.round(rng.normal(100, 2, 40))  # timer-quantised timings
        b = np.round(rng.normal(100, 2, 40))
        ci = speedup_ci(a, b, n_resamples=300)
        assert ci.method in ("BCa", "percentile", "exact")
        assert np.isfinite(ci.lo) and np.isfinite(ci.hi) and ci.lo <= ci.hi


def _patched_bootstrap(monkeypatch, failure):
    real = scipy_stats.bootstrap
    calls = []

    def fake(*args, **kwargs):
        calls.append(kwargs["method"])
        if kwargs["method"] == "BCa":
            failure()
            res = real(*args, **kwargs)
            res.confidence_interval = type(res.confidence_interval)(np.nan, np.nan)
            return res
        return real(*args, **kwargs)

    monkeypatch.setattr(scipy_stats, "bootstrap", fake)
    return calls


@pytest.mark.parametrize("mode", ["raise", "degenerate_warning", "nan"])
def test_speedup_ci_falls_back_to_percentile(monkeypatch, mode):
    def failure():
        if mode == "raise":
            raise ValueError("boom")
        if mode == "degenerate_warning":
            warnings.warn("degenerate", stats.bootstrap._DegenerateDataWarning)
        # mode == "nan": fall through, fake returns a NaN interval

    calls = _patched_bootstrap(monkeypatch, failure)
    rng = np.random.default_rng(2)
    a, b = _lognormal(rng, 50), _lognormal(rng, 50, median=120.0)
    ci = speedup_ci(a, b, n_resamples=300)
    assert calls == ["BCa", "percentile"]
    assert ci.method == "percentile"
    assert ci.lo < ci.ratio < ci.hi
    assert ci == speedup_ci(a, b, n_resamples=300)  # still deterministic


def test_speedup_ci_rejects_nonpositive():
    with pytest.raises(ValueError):
        speedup_ci([1.0, -2.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        speedup_ci([], [1.0])


# ---------------------------------------------------------------- effect sizes


def test_cliffs_delta_disjoint_sign():
    a = np.linspace(10, 11, 30)  # A: lower latency
    b = np.linspace(20, 21, 40)
    assert cliffs_delta(a, b) == -1.0  # a smaller than b
    assert cliffs_delta(b, a) == 1.0  # positive when first arg larger


def test_cliffs_delta_matches_brute_force():
    rng = np.random.default_rng(4)
    a = rng.integers(0, 10, 25).astype(float)  # with ties
    b = rng.integers(0, 12, 31).astype(float)
    brute = (np.sign(a[:, None] - b[None, :])).mean()
    assert cliffs_delta(a, b) == pytest.approx(brute)
    assert cliffs_delta(a, a) == 0.0


def test_mann_whitney_p():
    rng = np.random.default_rng(6)
    a, b = _lognormal(rng, 60), _lognormal(rng, 60, median=150.0)
    p = mann_whitney_p(a, b)
    assert 0.0 <= p < 1e-6
    assert p == pytest.approx(mann_whitney_p(b, a))
    assert mann_whitney_p(np.full(5, 1.0), np.full(5, 1.0)) == 1.0


def test_hodges_lehmann_exact_scale():
    a = _lognormal(np.random.default_rng(8), 50)
    # Pairwise differences of log(a) are symmetric about 0 -> median 0.
    assert hodges_lehmann_log_ratio(a, 2.0 * a) == pytest.approx(-math.log(2.0))
    assert hodges_lehmann_log_ratio(2.0 * a, a) == pytest.approx(math.log(2.0))


def test_hodges_lehmann_subsampled(monkeypatch):
    rng = np.random.default_rng(9)
    a, b = _lognormal(rng, 300), _lognormal(rng, 300, median=130.0)
    full = hodges_lehmann_log_ratio(a, b)
    monkeypatch.setattr(stats.ranks, "_HL_MAX_PAIRS", 20_000)  # force subsampling
    sub1 = hodges_lehmann_log_ratio(a, b, seed=1)
    assert sub1 == hodges_lehmann_log_ratio(a, b, seed=1)
    assert sub1 == pytest.approx(full, abs=0.01)
    assert full == pytest.approx(-math.log(1.3), abs=0.03)


# ---------------------------------------------------------------- BH


def test_benjamini_hochberg_hand_example():
    # m=4, sorted p: .005 .01 .03 .04 -> p*m/rank: .02 .02 .04 .04
    adj = benjamini_hochberg([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(adj, [0.02, 0.04, 0.04, 0.02])
    # Monotone step-up: [.5,.8,.9] -> 1.5, 1.2, .9 -> cummin from top = .9
    np.testing.assert_allclose(benjamini_hochberg([0.5, 0.9, 0.8]), [0.9, 0.9, 0.9])


def test_benjamini_hochberg_nan_and_cap():
    adj = benjamini_hochberg([0.01, np.nan, 0.04, 0.03, 0.005, np.nan])
    assert np.isnan(adj[1]) and np.isnan(adj[5])
    np.testing.assert_allclose(adj[[0, 2, 3, 4]], [0.02, 0.04, 0.04, 0.02])
    assert np.all(np.isnan(benjamini_hochberg([np.nan, np.nan])))
    assert benjamini_hochberg([]).size == 0
    p = np.random.default_rng(0).uniform(0, 1, 50)
    adj = benjamini_hochberg(p)
    assert np.all(adj <= 1.0) and np.all(adj >= p)
    order = np.argsort(p)
    assert np.all(np.diff(adj[order]) >= -1e-15)  # monotone in raw p


def test_benjamini_hochberg_fallback_matches_scipy():
    p = np.random.default_rng(11).uniform(0, 0.2, 40)
    np.testing.assert_allclose(stats.ranks._bh_fallback(p), benjamini_hochberg(p))


# ---------------------------------------------------------------- compare / verdict


def test_identical_distributions_within_noise():
    n_cases, noise = 100, 0
    for seed in range(n_cases):
        a = _lognormal(np.random.default_rng(2 * seed), 60, sigma=0.05)
        b = _lognormal(np.random.default_rng(2 * seed + 1), 60, sigma=0.05)
        c = compare(a, b, seed=seed, n_resamples=500)
        noise += c.verdict() == "within noise"
    assert noise / n_cases >= 0.95


def test_disjoint_verdicts():
    a = np.linspace(10, 11, 30)
    b = np.linspace(20, 21, 30)
    fast = compare(a, b, n_resamples=500)
    assert isinstance(fast, Comparison)
    assert fast.cliffs_delta == -1.0
    assert fast.speedup.ratio > 1.8 and fast.speedup.lo > 1.01
    assert fast.hl_log_ratio < 0
    assert fast.p_adjusted == fast.p_value < 1e-6
    assert fast.verdict() == "faster"

    slow = compare(b, a, n_resamples=500)
    assert slow.cliffs_delta == 1.0
    assert slow.speedup.hi < 0.99
    assert slow.verdict() == "slower"
    # A corrected p above alpha overrides the effect size.
    assert slow.verdict(p_adjusted=0.2) == "within noise"


def test_verdict_requires_ci_outside_noise_band():
    # Tiny but highly "significant" shift (0.3%) must stay within noise.
    rng = np.random.default_rng(12)
    a = _lognormal(rng, 3000, median=100.0, sigma=0.002)
    b = _lognormal(rng, 3000, median=100.3, sigma=0.002)
    c = compare(a, b, n_resamples=300)
    assert c.p_value < 1e-10
    assert c.verdict() == "within noise"
    # Same data with a tighter band becomes a real speedup.
    c.noise_band = 0.001
    assert c.verdict() == "faster"


def test_compare_rows_bh():
    rng = np.random.default_rng(13)
    pairs = [
        (_lognormal(rng, 40), _lognormal(rng, 40, median=104.0)),
        (_lognormal(rng, 40), _lognormal(rng, 40)),
        (np.linspace(10, 11, 40), np.linspace(20, 21, 40)),
    ]
    rows = compare_rows(pairs, seed=3, n_resamples=300)
    assert len(rows) == 3
    raw = [r.p_value for r in rows]
    np.testing.assert_allclose([r.p_adjusted for r in rows], benjamini_hochberg(raw))
    assert all(r.p_adjusted >= r.p_value for r in rows)
    single = compare(*pairs[0], seed=3, n_resamples=300)
    assert single.speedup == rows[0].speedup
    assert single.p_value == rows[0].p_value
    assert rows[2].verdict() == "faster"
    assert compare_rows([]) == []


# ---------------------------------------------------------------- throughput


def test_tflops_hand_example():
    expected = 4 * 1024 * 1024 * 64 / 1e-6 / 1e12  # 268.435456
    assert tflops(1, 1, 1024, 64, False, 1.0) == pytest.approx(expected)
    assert tflops(1, 1, 1024, 64, True, 1.0) == pytest.approx(expected / 2)
    assert tflops(2, 8, 1024, 64, False, 16.0) == pytest.approx(expected)


def test_effective_gbps_hand_example():
    expected = 4 * 1024 * 64 * 2 / 1e-6 / 1e9  # 524.288
    assert effective_gbps(1, 1, 1024, 64, 1.0) == pytest.approx(expected)
    assert effective_gbps(1, 1, 1024, 64, 1.0, bytes_per_elem=4) == pytest.approx(2 * expected)
    with pytest.raises(ValueError):
        tflops(1, 1, 1, 1, False, 0.0)


# ---------------------------------------------------------------- hygiene


def test_no_torch_import():
    """The statistics run on a CPU-only analysis box: numpy, scipy and the standard library, and each
    other (lab.measure.stats.*), nothing else."""
    names, inside = set(), set()
    for path in pathlib.Path(stats.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                (inside if node.module.startswith("lab.measure.stats.") else names).add(node.module.split(".")[0])
    assert "torch" not in names
    assert names <= {"__future__", "functools", "inspect", "math", "warnings", "dataclasses", "typing", "numpy", "scipy"}
