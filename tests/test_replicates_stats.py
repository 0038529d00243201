"""The replicated interval (lab.measure.stats.replicated_speedup_ci) on synthetic experiments whose
between-replicate variance is known, its reduction to the one-process interval, the variance split
and the leave-one-replicate-out calibration. CPU only; seeded; a few seconds.

Every expectation here comes from the simulation's own construction (the true ratio, tau) or from
textbook results (the sample median's asymptotic variance pi sigma^2 / (2 n), Student's t), never
from the code under test.
"""

import math

import numpy as np
import pytest
from scipy import stats as st

from lab.measure import stats

TRUE_RATIO = 1.10  # B is 10 % slower than A: speedup of A over B
N_PER_REP = 20  # samples per replicate and implementation (a default run's per-replicate minimum)
SIGMA_W = 0.01  # within-process SD of log latency (1 %)
# sampling SD of one replicate's log ratio of medians: two medians of N_PER_REP normal samples
WITHIN_SE = math.sqrt(2 * math.pi * SIGMA_W ** 2 / (2 * N_PER_REP))


def experiment(rng, R, tau, n=N_PER_REP, skew=False):
    """One run of R replicates: A and B measured in the same process (a shared process shift that
    cancels in the ratio), B's ratio shifted by the replicate's own effect u_r ~ N(0, tau^2)."""
    a, b = {}, {}
    for r in range(R):
        shift, u = rng.normal(0, 0.005), rng.normal(0, tau)
        noise = (lambda: rng.gumbel(0, SIGMA_W, n)) if skew else (lambda: rng.normal(0, SIGMA_W, n))
        a[r] = 100 * np.exp(shift + noise())
        b[r] = 100 * np.exp(shift + math.log(TRUE_RATIO) + u + noise())
    return a, b


def naive_two_level_percentile(a, b, rng, n_boot=400):
    """The plain two-level bootstrap the docstring compares against: replicates drawn with
    replacement (paired), then samples within each drawn replicate; 95 % percentile interval."""
    R = len(a)
    A, B = np.stack([a[r] for r in range(R)]), np.stack([b[r] for r in range(R)])
    n = A.shape[1]
    k = rng.integers(0, R, size=(n_boot, R))
    pick = lambda X: np.concatenate(  # noqa: E731
        [X[k[:, j][:, None], rng.integers(0, n, size=(n_boot, n))] for j in range(R)], axis=1)
    ratios = np.median(pick(B), axis=1) / np.median(pick(A), axis=1)
    return np.quantile(ratios, [0.025, 0.975])


def coverage(R, tau, trials, seed, skew=False):
    rng = np.random.default_rng(seed)
    hits = {"replicated": 0, "one_process": 0, "naive": 0}
    half = {"replicated": [], "one_process": []}
    for t in range(trials):
        a, b = experiment(rng, R, tau, skew=skew)
        rep = stats.speedup_ci(a, b, n_resamples=400, seed=t)
        assert rep.method == "replicates" and rep.replicates == R
        one = stats.speedup_ci(stats.pooled(a), stats.pooled(b), n_resamples=400, seed=t)
        lo, hi = naive_two_level_percentile(a, b, rng)
        hits["replicated"] += rep.lo <= TRUE_RATIO <= rep.hi
        hits["one_process"] += one.lo <= TRUE_RATIO <= one.hi
        hits["naive"] += lo <= TRUE_RATIO <= hi
        half["replicated"].append(math.log(rep.hi / rep.lo) / 2)
        half["one_process"].append(math.log(one.hi / one.lo) / 2)
    return {k: v / trials for k, v in hits.items()}, {k: float(np.mean(v)) for k, v in half.items()}


def test_interval_covers_when_between_replicate_variance_dominates():
    """tau three times one replicate's sampling SE: the replicated interval holds its 95 %, the
    one-process interval (samples pooled, replicates ignored) and the plain two-level percentile
    bootstrap do not. 200 experiments: the coverage estimate's SD is about 1.5 %."""
    cov, _ = coverage(R=3, tau=3 * WITHIN_SE, trials=200, seed=1)
    assert 0.91 <= cov["replicated"] <= 0.995, cov
    assert cov["one_process"] < 0.70, cov
    assert cov["naive"] < 0.92, cov


def test_interval_without_between_variance_stays_calibrated_and_not_far_wider():
    """tau = 0, skewed (Gumbel) latencies: coverage at least nominal, and the price of estimating
    the between part from three replicates bounded: on average less than twice the half-width of
    the one-process interval, which is right here."""
    cov, half = coverage(R=3, tau=0.0, trials=120, seed=2, skew=True)
    assert cov["replicated"] >= 0.92, cov
    assert cov["one_process"] >= 0.90, cov  # the data hold no between variance: pooling is fine
    assert half["replicated"] < 2.0 * half["one_process"], half


def test_interval_se_matches_the_spread_of_the_estimate():
    """Across experiments the estimate's own SD (known by simulating) against the interval's
    se_log: the mean se_log is within 30 % of it (S from 2 df is biased low by c4 = 0.886)."""
    rng = np.random.default_rng(3)
    tau = 2 * WITHIN_SE
    logs, ses = [], []
    for t in range(120):
        a, b = experiment(rng, 3, tau)
        ci = stats.speedup_ci(a, b, n_resamples=300, seed=t)
        logs.append(math.log(ci.ratio))
        ses.append(ci.se_log)
    true_sd = math.sqrt(tau ** 2 / 3 + WITHIN_SE ** 2 / 3)
    assert np.std(logs, ddof=1) == pytest.approx(true_sd, rel=0.2)
    assert np.mean(ses) == pytest.approx(true_sd, rel=0.3)


def test_one_replicate_reduces_to_the_one_process_interval():
    rng = np.random.default_rng(4)
    a, b = 100 * np.exp(rng.normal(0, 0.01, 80)), 110 * np.exp(rng.normal(0, 0.01, 60))
    base = stats.speedup_ci(a, b)
    assert base.method == "BCa" and base.replicates == 1 and base.se_log is None
    assert stats.speedup_ci({0: a}, {0: b}) == base
    assert stats.speedup_ci({7: a}, {7: b}) == base
    assert stats.speedup_ci({0: a}, {0: b}, paired=False) == base
    # replicates in common fewer than two (b lost two of its replicates): the pooled samples
    split = {0: a[:30], 1: a[30:55], 2: a[55:]}
    assert stats.speedup_ci(split, {1: b}) == stats.speedup_ci(a, b)
    cmp_one, cmp_map = stats.compare(a, b), stats.compare({0: a}, {0: b})
    assert cmp_one.speedup == cmp_map.speedup and cmp_one.p_value == cmp_map.p_value


def test_compare_with_replicates_pools_the_rank_statistics():
    rng = np.random.default_rng(5)
    a, b = experiment(rng, 3, 0.0)
    c = stats.compare(a, b)
    pa, pb = np.concatenate([a[r] for r in range(3)]), np.concatenate([b[r] for r in range(3)])
    assert c.speedup.method == "replicates"
    geo = math.exp(np.mean([math.log(np.median(b[r]) / np.median(a[r])) for r in range(3)]))
    assert c.speedup.ratio == pytest.approx(geo)
    assert c.cliffs_delta == pytest.approx(stats.cliffs_delta(pa, pb))
    assert c.p_value == pytest.approx(stats.mann_whitney_p(pa, pb))


def test_replicated_interval_formula_by_hand():
    """Replicates whose samples are identical within each (no within variance): the interval is
    the t interval over the three replicates' log ratios, computed here by hand."""
    a = {r: np.full(10, 100.0) for r in range(3)}
    logs = np.log([1.00, 1.02, 1.04])
    b = {r: np.full(10, 100.0 * math.exp(x)) for r, x in enumerate(logs)}
    ci = stats.speedup_ci(a, b)
    ratio = math.exp(logs.mean())  # the geometric mean of the replicates' ratios
    se = np.std(logs, ddof=1) / math.sqrt(3)
    t = st.t.ppf(0.975, 2)
    assert ci.ratio == pytest.approx(ratio)
    assert ci.ratio == pytest.approx(stats.replicated_median(b) / stats.replicated_median(a))
    assert ci.df == pytest.approx(2)
    assert ci.lo == pytest.approx(ratio * math.exp(-t * se))
    assert ci.hi == pytest.approx(ratio * math.exp(t * se))


def test_unpaired_interval_across_two_runs_covers():
    """Two runs (the same kernels) with their own process effects: the unpaired interval of the
    ratio of A in one run to A in the other covers the true 1.0; the pooled one-process interval
    does not. tau on each run's log median."""
    rng = np.random.default_rng(6)
    tau, hits, pooled_hits, trials = 3 * SIGMA_W * math.sqrt(math.pi / (2 * N_PER_REP)), 0, 0, 200
    for t in range(trials):
        x = {r: 100 * np.exp(rng.normal(0, tau) + rng.normal(0, SIGMA_W, N_PER_REP)) for r in range(3)}
        y = {r: 100 * np.exp(rng.normal(0, tau) + rng.normal(0, SIGMA_W, N_PER_REP)) for r in range(3)}
        ci = stats.speedup_ci(x, y, paired=False, n_resamples=300, seed=t)
        hits += ci.lo <= 1.0 <= ci.hi
        one = stats.speedup_ci(stats.pooled(x), stats.pooled(y), n_resamples=300, seed=t)
        pooled_hits += one.lo <= 1.0 <= one.hi
    assert hits / trials >= 0.91
    assert pooled_hits / trials < 0.75


def test_variance_split_recovers_known_components():
    """30 replicates of 200 normal samples: tau^2 and the median's sampling variance
    pi sigma^2 / (2 n) are recovered (tau^2's estimate has 29 df: about +-26 % at 1 SD)."""
    rng = np.random.default_rng(7)
    tau, n = 0.01, 200
    reps = {r: 100 * np.exp(rng.normal(0, tau) + rng.normal(0, SIGMA_W, n)) for r in range(30)}
    split = stats.variance_split(reps, n_resamples=400, seed=0)
    assert split.replicates == 30
    assert split.within == pytest.approx(math.pi * SIGMA_W ** 2 / (2 * n), rel=0.3)
    assert split.between == pytest.approx(tau ** 2, rel=0.6)
    assert 0.8 < split.between_share < 1.0
    none = stats.variance_split({r: 100 * np.exp(rng.normal(0, SIGMA_W, n)) for r in range(30)}, n_resamples=400)
    assert none.between_share < 0.4
    with pytest.raises(ValueError):
        stats.variance_split({0: np.ones(5)})


def test_leave_one_out_calibration():
    """Where the between part dominates, the interval from two replicates covers the left-out
    replicate's point at about P(|T_1| < t_(1, .975) / sqrt(3)) = (2 / pi) atan(12.706 / sqrt(3)),
    91 % (the mean of two points against a third: Student's t with 1 df), and each row's
    `expected_covered` says so. The prediction interval for one replicate is nominally 95 %; with
    one df its Satterthwaite quantile trusts a chance-small spread (leave_one_out's docstring),
    so it holds about 90 % here. The one-process interval of the two held-in replicates covers far
    fewer: it knows nothing of the between variance."""
    rng = np.random.default_rng(8)
    rows, one_hits = [], 0
    for t in range(100):
        a, b = experiment(rng, 3, 5 * WITHIN_SE)
        got = stats.leave_one_out(a, b, n_resamples=300, seed=t)
        assert [g["left_out"] for g in got] == [0, 1, 2]
        for g in got:
            assert g["point"] == pytest.approx(np.median(b[g["left_out"]]) / np.median(a[g["left_out"]]))
            rest = [r for r in range(3) if r != g["left_out"]]
            one = stats.speedup_ci(np.concatenate([a[r] for r in rest]), np.concatenate([b[r] for r in rest]),
                                   n_resamples=300, seed=t)
            one_hits += one.lo <= g["point"] <= one.hi
        rows += got
    expected = 2 / math.pi * math.atan(st.t.ppf(0.975, 1) / math.sqrt(3))
    covered = np.mean([g["covered"] for g in rows])
    assert expected == pytest.approx(0.914, abs=0.001)
    assert np.mean([g["expected_covered"] for g in rows]) == pytest.approx(expected, abs=0.05)
    assert covered == pytest.approx(expected, abs=0.07)
    assert 0.87 <= np.mean([g["pred_covered"] for g in rows]) <= 0.99
    assert one_hits / len(rows) < 0.6
    with pytest.raises(ValueError):
        stats.leave_one_out({0: a[0], 1: a[1]}, {0: b[0], 1: b[1]})


def test_leave_one_out_intervals_are_at_the_confidence_asked():
    """Each left-out row's interval is replicated_speedup_ci of the other replicates at the confidence passed
    (an independent call of the interval, not leave_one_out's own arithmetic); at 0.5 it is narrower than at 0.95."""
    rng = np.random.default_rng(3)
    a, b = experiment(rng, 3, 5 * WITHIN_SE)
    rows = stats.leave_one_out(a, b, confidence=0.5, n_resamples=200, seed=1)
    for r in rows:
        rest = [k for k in range(3) if k != r["left_out"]]
        ci = stats.replicated_speedup_ci({k: a[k] for k in rest}, {k: b[k] for k in rest}, 0.5, n_resamples=200,
                                         seed=1)
        wide = stats.replicated_speedup_ci({k: a[k] for k in rest}, {k: b[k] for k in rest}, 0.95, n_resamples=200,
                                           seed=1)
        assert (r["lo"], r["hi"]) == (ci.lo, ci.hi) and wide.hi - wide.lo > ci.hi - ci.lo
