"""Speedups compared round by round (lab.measure.stats.round_log_ratios, RoundRobinSamples) on
synthetic round robins whose clock steps part way through a process, as an H100's did at
Llama-3-70B S = 8192 (data/explorations/2026-11-26-cold-drift/). CPU only; seeded; a few seconds.

Expectations come from the simulation's construction (the true ratio, the round the clock steps
at) or from independent computations here (pandas' per-group medians, the sample median's
asymptotic variance pi sigma^2 / (2 n), Student's t), never from the code under test.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from lab.measure import records, stats

TRUE_RATIO = 1.02  # A (the step) 2 % faster than B (the peer)
SIGMA = 0.01  # within-process SD of one sample's log latency
PER_TURN = 3  # samples per row per round


def round_robin(rng, interleave, R=3, rounds_a=24, rounds_b=8, step_at=(4, 10), slow=1.10, tau=0.002):
    """R replicates of two rows of one round robin. Every round each row still sampling takes
    PER_TURN samples; B stops after rounds_b rounds, A goes on to rounds_a. From a round drawn in
    `step_at` on, the clock is `slow` times slower for both (the drop a GPU shows once only rows at
    full load are left). Each replicate shifts A's ratio by its own N(0, tau)."""
    a, b, ra, rb = {}, {}, {}, {}
    for r in range(R):
        step = rng.integers(*step_at)
        u = rng.normal(0, tau)
        for lat, rnd, rows, base in ((a, ra, rounds_a, 100.0 / TRUE_RATIO * math.exp(u)), (b, rb, rounds_b, 100.0)):
            k = np.repeat(np.arange(rows), PER_TURN)
            clock = np.where(k >= step, slow, 1.0)
            lat[r] = base * clock * np.exp(rng.normal(0, SIGMA, k.size))
            rnd[r] = k
    return stats.RoundRobinSamples(a, ra, interleave), stats.RoundRobinSamples(b, rb, interleave)


def pandas_round_log_ratios(a, ra, b, rb) -> np.ndarray:
    """The same quantity as round_log_ratios, by pandas: per-round medians, inner join, log ratio."""
    ma = pd.Series(a).groupby(np.asarray(ra)).median()
    mb = pd.Series(b).groupby(np.asarray(rb)).median()
    both = ma.index.intersection(mb.index).sort_values()
    return np.log(mb[both].to_numpy() / ma[both].to_numpy())


def test_round_log_ratios_match_per_round_medians_of_the_common_rounds():
    rng = np.random.default_rng(1)
    a, b = rng.lognormal(4, 0.05, 101), rng.lognormal(4, 0.05, 77)
    ra, rb = rng.integers(0, 30, a.size), rng.integers(10, 45, b.size)  # uneven counts, partly disjoint
    got = stats.round_log_ratios(a, ra, b, rb)
    want = pandas_round_log_ratios(a, ra, b, rb)
    assert got.size == want.size == np.intersect1d(ra, rb).size
    np.testing.assert_array_equal(got, want)


def test_a_clock_step_biases_the_ratio_of_medians_but_not_the_round_paired_ratio():
    """200 simulated runs of three replicates: the round-paired interval covers the true ratio at
    about its confidence; the ratio of medians, which compares A's slow late rounds with B's fast
    early ones, misses it in most runs (what makes this simulation a test of the pairing)."""
    rng = np.random.default_rng(7)
    paired = medians = 0
    estimates = []
    for t in range(200):
        a, b = round_robin(rng, ("run", t))
        ci = stats.speedup_ci(a, b, n_resamples=300, seed=t)
        assert ci.by_round and ci.method == "replicates" and ci.replicates == 3
        paired += ci.lo <= TRUE_RATIO <= ci.hi
        estimates.append(ci.ratio)
        plain = stats.speedup_ci(dict(a), dict(b), n_resamples=300, seed=t)
        assert not plain.by_round
        medians += plain.lo <= TRUE_RATIO <= plain.hi
    assert paired / 200 >= 0.90
    assert medians / 200 <= 0.50
    assert abs(np.mean(estimates) / TRUE_RATIO - 1) < 0.002


def test_the_replicated_round_paired_interval_by_hand():
    """One sample per row per round, A at 100 us, B at 100 exp(c_r + tiny noise): each replicate's
    estimate is the median of its log ratios ~ c_r; with the spread of c_r far above the noise the
    interval is the t interval of the three replicates' estimates (df = 2)."""
    rng = np.random.default_rng(3)
    c = [0.01, 0.03, 0.05]
    n = 41
    a = {r: np.full(n, 100.0) for r in range(3)}
    b = {r: 100.0 * np.exp(c[r] + rng.normal(0, 1e-6, n)) for r in range(3)}
    rounds = {r: np.arange(n) for r in range(3)}
    ci = stats.speedup_ci(stats.RoundRobinSamples(a, rounds, 1), stats.RoundRobinSamples(b, rounds, 1),
                          n_resamples=500)
    est = [float(np.median(np.log(b[r] / 100.0))) for r in range(3)]
    se = np.std(est, ddof=1) / math.sqrt(3)
    half = st.t.ppf(0.975, 2) * se
    assert ci.by_round and ci.ratio == pytest.approx(math.exp(np.mean(est)), rel=1e-12)
    assert ci.lo == pytest.approx(math.exp(np.mean(est) - half), rel=1e-6)
    assert ci.hi == pytest.approx(math.exp(np.mean(est) + half), rel=1e-6)
    assert ci.df == pytest.approx(2.0)


def test_one_replicate_round_paired_interval_has_the_medians_sampling_width():
    """One replicate, 400 rounds of one sample each: the estimate is exp(median of the log ratios),
    the interval normal with the round bootstrap's SE, which should be near the sample median's
    asymptotic SE, sqrt(pi / (2 n)) sigma_d (sigma_d: the log ratio's SD, two samples' worth)."""
    rng = np.random.default_rng(11)
    n = 400
    rounds = {0: np.arange(n)}
    a = {0: 100.0 * np.exp(rng.normal(0, SIGMA, n))}
    b = {0: 100.0 * TRUE_RATIO * np.exp(rng.normal(0, SIGMA, n))}
    ci = stats.speedup_ci(stats.RoundRobinSamples(a, rounds, "i"), stats.RoundRobinSamples(b, rounds, "i"),
                          n_resamples=2000, seed=2)
    d = np.log(b[0] / a[0])
    assert ci.method == "rounds" and ci.by_round and ci.replicates == 1
    assert ci.ratio == pytest.approx(math.exp(np.median(d)), rel=1e-12)
    se = math.sqrt(math.pi / (2 * n)) * SIGMA * math.sqrt(2)
    assert math.log(ci.hi / ci.ratio) / st.norm.ppf(0.975) == pytest.approx(se, rel=0.25)
    assert math.log(ci.ratio / ci.lo) == pytest.approx(math.log(ci.hi / ci.ratio), rel=1e-9)


@pytest.mark.parametrize("case", ["few common rounds", "other interleave", "one side plain", "unpaired"])
def test_rows_that_cannot_be_paired_by_round_get_the_ratio_of_medians(case):
    rng = np.random.default_rng(5)
    a, b = round_robin(rng, "i")
    paired = True
    if case == "few common rounds":  # replicate 1 of B sampled in only two rounds that A also took
        keep = b.rounds[1] < 2
        b = stats.RoundRobinSamples({**b, 1: b[1][keep]}, {**b.rounds, 1: b.rounds[1][keep]}, "i")
    elif case == "other interleave":
        b = stats.RoundRobinSamples(dict(b), b.rounds, "j")
    elif case == "one side plain":
        b = dict(b)
    else:
        paired = False
    got = stats.speedup_ci(a, b, n_resamples=300, seed=1, paired=paired)
    want = stats.speedup_ci(dict(a), dict(b), n_resamples=300, seed=1, paired=paired)
    assert got == want and not got.by_round


def test_leave_one_out_uses_the_round_paired_point_and_interval():
    rng = np.random.default_rng(9)
    a, b = round_robin(rng, "i", R=4)
    rows = stats.leave_one_out(a, b, n_resamples=300)
    assert [r["left_out"] for r in rows] == [0, 1, 2, 3] and all(r["by_round"] for r in rows)
    for r in rows:
        k = r["left_out"]
        point = math.exp(np.median(pandas_round_log_ratios(a[k], a.rounds[k], b[k], b.rounds[k])))
        assert r["point"] == pytest.approx(point, rel=1e-12)
        rest = [j for j in range(4) if j != k]
        held = [float(np.median(pandas_round_log_ratios(a[j], a.rounds[j], b[j], b.rounds[j]))) for j in rest]
        assert r["ratio"] == pytest.approx(math.exp(np.mean(held)), rel=1e-12)
    # one replicate without MIN_ROUNDS rounds in common: every point and interval by medians
    keep = b.rounds[2] < stats.MIN_ROUNDS - 1
    b2 = stats.RoundRobinSamples({**b, 2: b[2][keep]}, {**b.rounds, 2: b.rounds[2][keep]}, "i")
    rows = stats.leave_one_out(a, b2, n_resamples=300)
    assert not any(r["by_round"] for r in rows)
    assert rows[0]["point"] == pytest.approx(float(np.median(b2[0]) / np.median(a[0])), rel=1e-12)


def test_samples_with_rounds_read_back_as_one_round_robin():
    df = pd.DataFrame(dict(latency_us=[5.0, 6.0, 7.0, 8.0], replicate=[0, 0, 1, 1], round=[0, 1, 0, 2]))
    got = records.latencies_by_replicate(df, ("run", "shape", "hot"))
    assert isinstance(got, stats.RoundRobinSamples) and got.interleave == ("run", "shape", "hot")
    assert {k: v.tolist() for k, v in got.items()} == {0: [5.0, 6.0], 1: [7.0, 8.0]}
    assert {k: v.tolist() for k, v in got.rounds.items()} == {0: [0, 1], 1: [0, 2]}
    assert not isinstance(records.latencies_by_replicate(df), stats.RoundRobinSamples)
    older = df.assign(round=[0, 1, None, None])  # a run resumed over replicates recorded before rounds
    assert not isinstance(records.latencies_by_replicate(older, "x"), stats.RoundRobinSamples)
    assert not isinstance(records.latencies_by_replicate(df.drop(columns="round"), "x"), stats.RoundRobinSamples)


def test_a_table_without_a_replicate_column_is_one_replicate_zero():
    """Samples recorded before replicates (no `replicate` column) read back as replicate 0, in the table's
    order, as with_replicate numbers them; with the column, each replicate its own rows in order."""
    old = pd.DataFrame({"latency_us": [3.0, 1.0, 2.0]})
    got = records.latencies_by_replicate(old)
    assert list(got) == [0] and got[0].tolist() == [3.0, 1.0, 2.0]
    new = pd.DataFrame({"latency_us": [3.0, 1.0, 2.0, 5.0], "replicate": [1, 0, 1, 0]})
    got = records.latencies_by_replicate(new)
    assert list(got) == [0, 1] and got[0].tolist() == [1.0, 5.0] and got[1].tolist() == [3.0, 2.0]


def test_rounds_read_back_as_integers_and_latencies_as_floats():
    """A resumed run's samples table may hold rounds as floats (written beside replicates without
    them) and a hand-made one integer latencies: the round robin takes integer rounds and float
    latencies either way."""
    df = pd.DataFrame(dict(latency_us=[5, 6, 7], replicate=[0, 0, 0], round=[0.0, 1.0, 1.0]))
    got = records.latencies_by_replicate(df, "i")
    assert got[0].dtype == np.float64 and got.rounds[0].dtype.kind == "i"
    assert got.rounds[0].tolist() == [0, 1, 1]


def test_medians_by_round_are_each_rounds_median():
    rng = np.random.default_rng(4)
    x, r = rng.lognormal(3, 0.2, 57), rng.integers(0, 9, 57)
    keys, med = stats.samples._medians_by_round(x, r)
    want = pd.Series(x).groupby(r).median()
    assert keys.tolist() == want.index.tolist()
    np.testing.assert_array_equal(med, want.to_numpy())


def test_subsets_keep_their_rounds_and_round_robin():
    a = stats.RoundRobinSamples({0: [1.0], 1: [2.0, 3.0]}, {0: [4], 1: [5, 6]}, ("run", "s", "hot"))
    sub = stats.samples.subset_replicates(a, [1])
    assert isinstance(sub, stats.RoundRobinSamples) and sub.interleave == ("run", "s", "hot")
    assert list(sub) == [1] and sub.rounds[1].tolist() == [5, 6]
    assert stats.samples.subset_replicates({0: [1.0], 1: [2.0]}, [0]) == {0: [1.0]}


def test_bad_round_robins_are_named():
    with pytest.raises(ValueError, match=r"^round_log_ratios needs one round per sample on each side$"):
        stats.round_log_ratios([1.0, 2.0], [0], [1.0], [0])
    with pytest.raises(ValueError, match=r"^a must be strictly positive latencies$"):
        stats.round_log_ratios([0.0], [0], [1.0], [0])
    with pytest.raises(ValueError, match=r"^b must be strictly positive latencies$"):
        stats.round_log_ratios([1.0], [0], [-1.0], [0])
    with pytest.raises(ValueError, match=r"^replicate 0: rounds must give one round per sample \(\(3,\) rounds for "
                                         r"\(2,\) samples\)$"):
        stats.RoundRobinSamples({0: [1.0, 2.0]}, {0: [0, 1, 2]}, "x")


def test_exactly_min_rounds_in_common_is_enough_to_pair():
    n = stats.MIN_ROUNDS
    rounds = {r: np.arange(n) for r in range(3)}
    a = stats.RoundRobinSamples({r: np.full(n, 100.0) for r in range(3)}, rounds, "i")
    b = stats.RoundRobinSamples({r: 100.0 * np.exp(0.01 * (r + 1) + 0.001 * np.arange(n)) for r in range(3)}, rounds,
                                "i")
    assert stats.speedup_ci(a, b, n_resamples=200).by_round


def test_one_replicate_round_paired_interval_details():
    n = 50
    rng = np.random.default_rng(8)
    rounds = {0: np.arange(n)}
    a = stats.RoundRobinSamples({0: np.full(n, 100.0)}, rounds, "i")
    b = stats.RoundRobinSamples({0: 100.0 * np.exp(rng.normal(0.02, 0.01, n))}, rounds, "i")
    first, again = (stats.speedup_ci(a, b, n_resamples=400, seed=3) for _ in range(2))
    assert first == again  # seeded: the same interval twice
    z95, z90 = st.norm.ppf(0.975), st.norm.ppf(0.95)
    assert first.df == math.inf and first.se_log == pytest.approx(math.log(first.hi / first.ratio) / z95, rel=1e-9)
    ninety = stats.speedup_ci(a, b, confidence=0.90, n_resamples=400, seed=3)
    assert math.log(ninety.hi / ninety.ratio) == pytest.approx(z90 * first.se_log, rel=1e-9)
    # every round the same ratio (1, exactly representable): no variability to express
    same = stats.RoundRobinSamples({0: np.full(n, 100.0)}, rounds, "i")
    assert stats.speedup_ci(a, same, n_resamples=400) == stats.SpeedupCI(1.0, 1.0, 1.0, "exact", 1, 0.0, math.inf, True)


def test_identical_replicates_give_an_exact_round_paired_interval():
    n = 6
    rounds = {r: np.arange(n) for r in range(3)}
    a = stats.RoundRobinSamples({r: np.full(n, 100.0) for r in range(3)}, rounds, "i")
    b = stats.RoundRobinSamples({r: np.full(n, 100.0) for r in range(3)}, rounds, "i")
    ci = stats.speedup_ci(a, b, n_resamples=200)
    assert (ci.ratio, ci.lo, ci.hi, ci.method, ci.by_round) == (1.0, 1.0, 1.0, "exact", True)
    rows = stats.leave_one_out(a, b, n_resamples=200)  # every point is the others' exact ratio, 1.0
    assert all(r["covered"] and r["pred_covered"] and r["pred_lo"] == r["pred_hi"] == 1.0 for r in rows)


def _median_boot_var_exact(d) -> float:
    """The bootstrap variance of the median of d, by enumerating every resample (len(d) small)."""
    import itertools

    meds = [np.median(c) for c in itertools.product(d, repeat=len(d))]
    return float(np.var(meds))


def test_round_bootstrap_variance_is_unbiased_for_the_medians_bootstrap_variance():
    """With three resamples a call, the mean of many calls is the exact bootstrap variance (by
    enumeration of all 27 resamples of three rounds) only with the unbiased (n - 1) divisor."""
    d = np.array([0.01, 0.03, 0.08])
    rng = np.random.default_rng(12)
    got = np.mean([stats.bootstrap.median_var(d, 3, rng) for _ in range(4000)])
    assert got == pytest.approx(_median_boot_var_exact(d), rel=0.06)


def test_a_replicates_log_median_variance_is_unbiased_for_its_bootstrap_variance():
    """The within-replicate part of the ratio of medians (stats.bootstrap.log_median_var), as the round
    bootstrap's above: three samples, every one of the 27 resamples enumerated."""
    x = np.array([100.0, 103.0, 109.0])
    rng = np.random.default_rng(13)
    got = np.mean([stats.bootstrap.log_median_var(x, 3, rng) for _ in range(4000)])
    assert got == pytest.approx(_median_boot_var_exact(np.log(x)), rel=0.06)


def test_leave_one_out_fields_by_hand():
    """Three replicates whose round-paired estimates differ far more than their rounds scatter:
    each left-out replicate's interval is the t interval (df = 1) of the other two, the prediction
    interval sqrt(3) times wider, and the expected coverage P(|T_1| < t / sqrt(3))."""
    rng = np.random.default_rng(2)
    c, n = [0.00, 0.02, 0.05], 41
    rounds = {r: np.arange(n) for r in range(3)}
    a = stats.RoundRobinSamples({r: np.full(n, 100.0) for r in range(3)}, rounds, "i")
    b = stats.RoundRobinSamples({r: 100.0 * np.exp(c[r] + rng.normal(0, 1e-6, n)) for r in range(3)}, rounds, "i")
    rows = stats.leave_one_out(a, b, n_resamples=300, seed=5)
    assert rows == stats.leave_one_out(a, b, n_resamples=300, seed=5)  # seeded
    est = [float(np.median(np.log(b[r] / 100.0))) for r in range(3)]
    q = st.t.ppf(0.975, 1)
    for r in rows:
        k = r["left_out"]
        rest = [est[j] for j in range(3) if j != k]
        m, se = np.mean(rest), np.std(rest, ddof=1) / math.sqrt(2)
        assert r["point"] == pytest.approx(math.exp(est[k]), rel=1e-12)
        assert r["df"] == pytest.approx(1.0, rel=1e-6)
        assert (r["lo"], r["hi"]) == pytest.approx((math.exp(m - q * se), math.exp(m + q * se)), rel=1e-5)
        assert (r["pred_lo"], r["pred_hi"]) == pytest.approx(
            (math.exp(m - q * se * math.sqrt(3)), math.exp(m + q * se * math.sqrt(3))), rel=1e-5)
        assert r["covered"] == (r["lo"] <= r["point"] <= r["hi"])
        assert r["pred_covered"] == (r["pred_lo"] <= r["point"] <= r["pred_hi"])
        assert r["expected_covered"] == pytest.approx(2 * st.t.cdf(q / math.sqrt(3), 1) - 1, rel=1e-4)


def test_leave_one_out_without_a_spread_between_replicates_expects_the_normal_rate():
    """Every replicate the same samples: no between-replicate spread, infinite df, and a calibrated
    interval of two covers a third replicate's point at P(|Z| < 1.96 / sqrt(3)) = 74 %."""
    rng = np.random.default_rng(6)
    x, y = 100.0 * np.exp(rng.normal(0, 0.01, 30)), 102.0 * np.exp(rng.normal(0, 0.01, 30))
    a, b = {r: x for r in range(3)}, {r: y for r in range(3)}
    rows = stats.leave_one_out(a, b, n_resamples=300, seed=7)
    want = 2 * st.norm.cdf(st.norm.ppf(0.975) / math.sqrt(3)) - 1
    assert all(r["df"] == math.inf and r["expected_covered"] == pytest.approx(want, rel=1e-9) for r in rows)
    # the interval is the one the report gives from the replicates held in, with the seed asked for
    # (here sampling alone sets its width, so another seed gives another interval)
    held = stats.speedup_ci({1: x, 2: x}, {1: y, 2: y}, n_resamples=300, seed=7)
    assert (rows[0]["lo"], rows[0]["hi"]) == (held.lo, held.hi)
    assert rows == stats.leave_one_out(a, b, n_resamples=300, seed=7)


def test_leave_one_out_takes_the_replicates_in_common_and_names_bad_input():
    rng = np.random.default_rng(1)
    a = {r: rng.lognormal(4, 0.01, 20) for r in range(4)}
    b = {r: rng.lognormal(4, 0.01, 20) for r in range(3)}
    assert [r["left_out"] for r in stats.leave_one_out(a, b, n_resamples=100)] == [0, 1, 2]
    with pytest.raises(ValueError, match=r"^leave_one_out needs at least three replicates in common$"):
        stats.leave_one_out({0: a[0], 1: a[1]}, b, n_resamples=100)
    with pytest.raises(ValueError, match=r"^a_reps must be strictly positive latencies$"):
        stats.leave_one_out({**a, 0: [0.0]}, b)
    with pytest.raises(ValueError, match=r"^b_reps must be strictly positive latencies$"):
        stats.leave_one_out(a, {**b, 0: [0.0]})
