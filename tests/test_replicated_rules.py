"""The rules over replicates, at their edges, with expectations by hand (issue 20): the median and its
interval over replicates, the random-effects variance and its degrees of freedom, the t interval
(the normal one at infinite df), the replicated speedup interval's defaults, the comparison's
pairing of replicates, the samples' replicate column, the Hodges-Lehmann subsample, and the
"does it replicate?" agreement counts (lab.report.replication.agreement) on two fake runs whose
every interval is given. CPU only, fast; tests/test_replicates_stats.py holds the simulations.
"""

import math

import numpy as np
import pandas as pd
import pytest

from lab.kernels.shape import Shape
from lab.measure import records, stats
from lab.measure.stats import SpeedupCI
from lab.report import replication
from lab.report.load import RunData

T975_2 = 4.302652729749462  # Student's t, 97.5 % quantile, 2 df (tables: 4.303)
Z975 = 1.959963984540054  # the normal's 97.5 % quantile (tables: 1.960)


# --- samples by replicate ---------------------------------------------------------------------

def test_samples_by_replicate_leave_out_empty_replicates_and_name_what_is_wrong():
    got = stats.by_replicate({3: [2.0, 1.0], 1: [], 0: [5.0]})
    assert list(got) == [0, 3] and list(got[3]) == [2.0, 1.0]  # ascending, the empty one left out
    assert list(stats.by_replicate([4.0, 5.0])) == [0]  # one array: replicate 0
    with pytest.raises(ValueError, match="^samples must be non-empty$"):
        stats.pooled({0: []})
    with pytest.raises(ValueError, match="^a_us must be strictly positive latencies$"):
        stats.speedup_ci({0: [1.0, -1.0]}, [1.0])
    with pytest.raises(ValueError, match="^b_us must be strictly positive latencies$"):
        stats.speedup_ci([1.0], {2: [0.0]})


def test_pooled_samples_are_every_replicate_in_order():
    assert list(stats.pooled({1: [3.0], 0: [1.0, 2.0]})) == [1.0, 2.0, 3.0]
    assert list(stats.pooled({0: [1.0, 2.0], 1: [3.0]})) == [1.0, 2.0, 3.0]
    assert list(stats.pooled({5: [7.0]})) == [7.0]


def test_speedup_interval_goes_over_replicates_from_two_of_them():
    # two replicates (constant samples, log ratios log 1.01 and log 1.03): the t interval with 1 df,
    # paired (in common) or not (the larger side's count)
    a = {0: np.full(4, 100.0), 1: np.full(4, 100.0)}
    b = {0: np.full(4, 101.0), 1: np.full(4, 103.0)}
    paired = stats.speedup_ci(a, b)
    assert paired.method == "replicates" and paired.replicates == 2 and paired.df == pytest.approx(1.0)
    unpaired = stats.speedup_ci({0: np.full(4, 100.0)}, b, paired=False)
    assert unpaired.method == "replicates" and unpaired.replicates == 2


def test_speedup_interval_over_replicates_follows_its_seed():
    # where the sampling variance decides the width, the bootstrap's seed shows: the same seed
    # gives the same interval, another seed another one
    rng = np.random.default_rng(0)
    a = {r: 100 * np.exp(rng.normal(0, 0.01, 50)) for r in range(3)}
    b = {r: x * 1.02 for r, x in a.items()}
    for paired in (True, False):
        one = stats.speedup_ci(a, b, seed=1, paired=paired)
        assert one.method == "replicates"
        assert stats.speedup_ci(a, b, seed=1, paired=paired) == one
        assert stats.speedup_ci(a, b, seed=2, paired=paired).se_log != one.se_log


# --- the median over replicates and its interval -------------------------------------------------

def test_the_median_over_replicates_is_the_geometric_mean_of_their_medians():
    assert stats.replicated_median([5.0, 1.0, 3.0]) == 3.0
    assert stats.replicated_median({4: [5.0, 1.0, 3.0]}) == 3.0  # one replicate: its median
    assert stats.replicated_median({0: [1.0, 2.0, 3.0], 1: [4.0, 8.0, 16.0]}) == pytest.approx(4.0)  # sqrt(2 x 8)
    assert stats.replicated_median({0: [2.0], 1: [4.0], 2: [8.0]}) == pytest.approx(4.0)  # cbrt(2 x 4 x 8)


def test_median_interval_of_one_replicate_is_the_order_statistics_one():
    # n = 100: the 99 % interval is (x_37, x_64) (P(Bin(100, 1/2) <= 36) = 0.33 % <= 0.5 % <
    # P(<= 37) = 0.60 %), the 95 % one (x_40, x_61)
    x = {2: np.arange(1.0, 101.0)}
    assert stats.replicated_median_ci(x, 0.99) == (37.0, 64.0)
    assert stats.replicated_median_ci(x) == (40.0, 61.0)


def test_median_interval_over_replicates_by_hand():
    # constant samples within each replicate (no sampling variance): the t interval of the mean
    # log median over R = 3 replicates, S^2 / R with 2 df, exponentiated
    logs = np.log([100.0, 110.0, 121.0])
    x = {r: np.full(8, math.exp(v)) for r, v in enumerate(logs)}
    se = math.sqrt(np.var(logs, ddof=1) / 3)
    lo, hi = stats.replicated_median_ci(x)
    assert lo == pytest.approx(math.exp(logs.mean() - T975_2 * se), rel=1e-9)
    assert hi == pytest.approx(math.exp(logs.mean() + T975_2 * se), rel=1e-9)
    assert stats.replicated_median_ci({0: x[0], 1: x[1]}) != stats.replicated_median_ci({0: x[0]})  # two: not one
    lo, hi = stats.replicated_median_ci(x, 0.99)  # t(0.995, 2 df) = 9.925
    assert lo == pytest.approx(math.exp(logs.mean() - 9.924843200918287 * se), rel=1e-9)
    assert hi == pytest.approx(math.exp(logs.mean() + 9.924843200918287 * se), rel=1e-9)


def test_median_interval_over_replicates_is_seeded():
    # the replicates' medians alike, so the bootstrap's within-replicate variance decides the width:
    # the same call gives the same interval (summary.csv is reproducible), another seed another one
    rng = np.random.default_rng(2)
    x = {r: 100 * np.exp(rng.normal(0, 0.01, 30)) for r in range(3)}
    assert stats.replicated_median_ci(x) == stats.replicated_median_ci(x)
    assert stats.replicated_median_ci(x, seed=5) != stats.replicated_median_ci(x, seed=6)


# --- random effects and the t interval ----------------------------------------------------------

def test_random_effects_takes_the_larger_variance_and_satterthwaites_df():
    # no spread between replicates: sum(within) / R^2 = 0.09 / 9, normal (df = inf)
    var, df = stats.random_effects([0.0, 0.0, 0.0], [0.03, 0.03, 0.03])
    assert var == pytest.approx(0.01) and df == math.inf
    # S^2 = var(0, 0.1, 0.2) = 0.01, between = 0.01 / 3; within 0.27 / 9 = 0.03 wins:
    # df = (R - 1) (0.03 / (0.01 / 3))^2 = 2 x 81
    var, df = stats.random_effects([0.0, 0.1, 0.2], [0.09, 0.09, 0.09])
    assert var == pytest.approx(0.03) and df == pytest.approx(162.0)
    # the spread wins: var = between, df = R - 1
    var, df = stats.random_effects([0.0, 0.1, 0.2], [0.0, 0.0, 0.0])
    assert var == pytest.approx(0.01 / 3) and df == pytest.approx(2.0)


def test_t_interval_is_the_normal_one_at_infinite_df():
    lo, hi = stats.t_interval(0.0, 0.25, math.inf)  # default 95 %: +-1.96 x 0.5
    assert (lo, hi) == pytest.approx((-Z975 * 0.5, Z975 * 0.5), rel=1e-12)
    assert stats.t_interval(1.0, 0.0, 2.0) == (1.0, 1.0)  # no variance: no width
    assert stats.t_interval(0.0, 1.0, 2.0, 0.95) == pytest.approx((-T975_2, T975_2), rel=1e-12)


def test_replicated_interval_without_between_variance_uses_the_normal_quantile():
    # the three replicates' log ratios all 0.05 (no spread) and each replicate's samples with a
    # sampling variance: var = sum(w) / R^2, df = inf: the interval is +-1.96 SE, finite
    rng = np.random.default_rng(0)
    a = {r: 100 * np.exp(rng.normal(0, 0.01, 40)) for r in range(3)}
    b = {r: x * math.exp(0.05) for r, x in a.items()}
    ci = stats.replicated_speedup_ci(a, b)
    assert ci.df == math.inf and ci.method == "replicates" and ci.se_log > 0
    assert math.log(ci.hi / ci.ratio) == pytest.approx(Z975 * ci.se_log, rel=1e-9)
    assert ci.ratio == pytest.approx(math.exp(0.05))


def test_replicated_speedup_interval_defaults_to_95_percent():
    # constant samples: the t interval over the replicates' log ratios by hand (2 df)
    logs = np.log([1.00, 1.02, 1.04])
    a = {r: np.full(5, 100.0) for r in range(3)}
    b = {r: np.full(5, 100.0 * math.exp(v)) for r, v in enumerate(logs)}
    ci = stats.replicated_speedup_ci(a, b)
    half = T975_2 * np.std(logs, ddof=1) / math.sqrt(3)
    assert (ci.lo, ci.hi) == pytest.approx((math.exp(logs.mean() - half), math.exp(logs.mean() + half)), rel=1e-9)


def test_replicated_interval_without_any_variance_is_exact():
    # every sample of every replicate 1.0 (log 0, so that no rounding leaves a variance): no
    # sampling and no spread, var = 0
    a = {r: np.full(4, 1.0) for r in range(3)}
    assert stats.replicated_speedup_ci(a, dict(a)) == SpeedupCI(1.0, 1.0, 1.0, "exact", 3, 0.0, math.inf)
    # unpaired, the replicates are the larger side's count; one replicate each: var = 0 too
    assert stats.replicated_speedup_ci(a, {0: a[0]}, paired=False) == SpeedupCI(1.0, 1.0, 1.0, "exact", 3, 0.0,
                                                                                math.inf)
    assert stats.replicated_speedup_ci({0: a[0]}, {0: a[1]}, paired=False) == SpeedupCI(1.0, 1.0, 1.0, "exact", 1, 0.0,
                                                                                       math.inf)


def test_paired_replicated_interval_uses_the_replicates_in_common():
    # A has 0, 1, 2 and B 0, 1, 3: the pair 0, 1 (log ratios log 1.01, log 1.03), t with 1 df
    a = {r: np.full(4, 100.0) for r in (0, 1, 2)}
    b = {0: np.full(4, 101.0), 1: np.full(4, 103.0), 3: np.full(4, 200.0)}
    logs = np.log([1.01, 1.03])
    ci = stats.replicated_speedup_ci(a, b)
    half = 12.706204736174698 * np.std(logs, ddof=1) / math.sqrt(2)  # t(0.975, 1 df) = 12.706
    assert ci.replicates == 2 and ci.df == pytest.approx(1.0)
    assert (ci.lo, ci.hi) == pytest.approx((math.exp(logs.mean() - half), math.exp(logs.mean() + half)), rel=1e-9)
    with pytest.raises(ValueError, match="^paired replicated_speedup_ci needs at least two replicates in common$"):
        stats.replicated_speedup_ci(a, {0: b[0], 3: b[3]})


def test_replicated_interval_names_the_empty_side():
    full = {0: [1.0, 2.0], 1: [1.0, 2.0]}
    with pytest.raises(ValueError, match="^a_reps must be non-empty$"):
        stats.replicated_speedup_ci({0: []}, full)
    with pytest.raises(ValueError, match="^b_reps must be non-empty$"):
        stats.replicated_speedup_ci(full, {0: []})


def test_unpaired_interval_with_one_replicate_on_one_side_by_hand():
    # A: two constant replicates at 100 and 110 (S^2 = var(log 100, log 110), SE^2 = S^2 / 2, 1 df);
    # B: one constant replicate (no variance, infinite df). Welch-Satterthwaite: df = 1.
    a = {0: np.full(5, 100.0), 1: np.full(5, 110.0)}
    b = {0: np.full(5, 120.0)}
    var = np.var(np.log([100.0, 110.0]), ddof=1) / 2
    ratio = 120.0 / math.sqrt(100.0 * 110.0)
    ci = stats.replicated_speedup_ci(a, b, paired=False)
    half = 12.706204736174698 * math.sqrt(var)
    assert ci.ratio == pytest.approx(ratio) and ci.df == pytest.approx(1.0) and ci.replicates == 2
    assert ci.se_log == pytest.approx(math.sqrt(var))
    assert (ci.lo, ci.hi) == pytest.approx((ratio * math.exp(-half), ratio * math.exp(half)), rel=1e-9)


def test_replicated_interval_adds_both_sides_sampling_variance():
    # 200 normal(0, 1 %) log latencies per replicate, B = A x e^0.05 in each: no spread between the
    # log ratios, so var = sum(w_a + w_b) / R^2 with w ~ pi sigma^2 / (2 n) (a median's asymptotic
    # variance): SE = sqrt(3 x 2 x 7.85e-7 / 9) = 7.2e-4
    rng = np.random.default_rng(0)
    a = {r: 100 * np.exp(rng.normal(0, 0.01, 200)) for r in range(3)}
    b = {r: x * math.exp(0.05) for r, x in a.items()}
    ci = stats.replicated_speedup_ci(a, b)
    assert ci.se_log == pytest.approx(math.sqrt(6 * math.pi / 2 * 1e-4 / 200 / 9), rel=0.3)
    assert stats.replicated_speedup_ci(a, b) == ci  # seeded: the same interval again


def test_a_medians_bootstrap_variance_by_hand():
    # log x = 0, 1, 2: the median of three draws is 0 or 2 with probability 7/27 each, else 1:
    # variance 41/27 - 1 = 14/27
    x = np.exp([0.0, 1.0, 2.0])
    assert stats.bootstrap.log_median_var(x, 4000, np.random.default_rng(0)) == pytest.approx(14 / 27, rel=0.06)
    # 3000 samples: resampled in blocks (4e6 / 3000 = 1333 resamples a block); pi sigma^2 / (2 n)
    y = 100 * np.exp(np.random.default_rng(1).normal(0, 0.01, 3000))
    assert stats.bootstrap.log_median_var(y, 2000, np.random.default_rng(0)) == pytest.approx(math.pi / 2 * 1e-4 / 3000,
                                                                                      rel=0.25)


def test_resampled_medians_are_numpys_medians_bit_for_bit():
    # by hand: x = 1, 2, 10: draws 0,0,2 -> 1; 1,2,2 -> 10; 0,1,2 -> 2; 2,2,2 -> 10
    x = np.array([2.0, 10.0, 1.0])  # unsorted: ranks are x's, not positions
    idx = np.array([[2, 2, 1], [0, 1, 1], [2, 0, 1], [1, 1, 1]])
    assert stats.bootstrap._resampled_medians(x, idx).tolist() == [1.0, 10.0, 2.0, 10.0]
    # even size: the mean of the two middle values: 1,1,4,4 -> 2.5; 2,3,3,4 -> 3; 1,1,1,2 -> 1
    y = np.array([4.0, 1.0, 3.0, 2.0])
    idy = np.array([[1, 1, 0, 0], [3, 2, 2, 0], [1, 1, 1, 3]])
    assert stats.bootstrap._resampled_medians(y, idy).tolist() == [2.5, 3.0, 1.0]
    # against np.median itself: odd and even sizes, ties, one sample
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 4, 9, 10, 101, 1000):
        for z in (100 * np.exp(rng.normal(0, 0.01, n)), np.round(rng.uniform(1, 3, n), 1)):
            draws = rng.integers(0, n, size=(50, n))
            assert np.array_equal(stats.bootstrap._resampled_medians(z, draws), np.median(z[draws], axis=1)), n


# --- the comparison pairs the replicates of one run ---------------------------------------------

def _shared_processes(seed=3):
    """Three replicates (processes) 30 % apart, B 5 % slower than A in each: replicate r of A and
    of B ran in the same process."""
    rng = np.random.default_rng(seed)
    a = {r: m * np.exp(rng.normal(0, 0.001, 60)) for r, m in enumerate((100.0, 130.0, 170.0))}
    return a, {r: x * 1.05 for r, x in a.items()}


def test_compare_pairs_replicates_unless_told_not_to():
    # paired (one run, the default): every replicate's ratio is 1.05, a tight interval: faster.
    # Unpaired, each side's log median has the spread of 100, 130, 170 (SE 0.15 each): within noise.
    a, b = _shared_processes()
    assert stats.compare(a, b).verdict() == "faster"
    assert stats.compare(a, b, paired=False).verdict() == "within noise"
    (row,) = stats.compare_rows([(a, b)])
    assert row.verdict() == "faster" and row.speedup.lo > 1.04
    (row,) = stats.compare_rows([(a, b)], paired=False)
    assert row.verdict() == "within noise" and row.speedup.lo < 0.8


# --- the samples' replicate column ----------------------------------------------------------------

def test_replicate_column_is_integer_with_missing_values_as_replicate_0():
    s = pd.DataFrame({"latency_us": [1.0, 2.0, 3.0, 4.0], "replicate": [np.nan, 1.0, 2.0, 1.0]})
    got = records.with_replicate(s)["replicate"]
    assert list(got) == [0, 1, 2, 1] and got.dtype.kind == "i"
    by = records.latencies_by_replicate(s)
    assert list(by) == [0, 1, 2] and list(by[1]) == [2.0, 4.0]
    assert list(records.with_replicate(s.drop(columns="replicate"))["replicate"]) == [0, 0, 0, 0]


# --- Hodges-Lehmann's subsample of pairs ---------------------------------------------------------

def test_hodges_lehmann_subsample_draws_every_element():
    # 3 x 1.4 million pairs (> 4e6): a random subsample of pairs. With log a = (0, log 2, log 4)
    # against log b spread symmetrically around 0, the median of log a_i - log b_j is log 2 (the
    # mixture is symmetric about it); leaving out a's first element would give (log 2 + log 4) / 2.
    b = np.exp(np.linspace(-1.0, 1.0, 1_400_001))
    assert stats.hodges_lehmann_log_ratio([1.0, 2.0, 4.0], b) == pytest.approx(math.log(2), abs=0.01)
    assert stats.hodges_lehmann_log_ratio(b, [1.0, 2.0, 4.0]) == pytest.approx(-math.log(2), abs=0.01)


# --- does it replicate? the agreement counts ------------------------------------------------------

S1, S2, S3, S4, S5 = (Shape(1, 8, 512, 64, False), Shape(4, 16, 512, 64, False), Shape(2, 16, 8192, 128, False),
                      Shape(8, 16, 512, 64, False), Shape(1, 8, 512, 64, True))
P1, P2 = ("tma", "wgmma_overlap"), ("two_ctas_per_sm", "tma")  # (step, parent) in the manifest


class FakeRun(RunData):
    """What agreement reads from a run: its shapes and their scopes, steps, modes and every
    speedup interval, given."""

    def __init__(self, scopes: dict, variants, modes, cis: dict, replicates=3):
        self._scopes, self._variants, self._modes, self.cis, self._replicates = scopes, variants, modes, cis, replicates

    run_params = property(lambda self: type("P", (), {"scopes": self._scopes})())
    measured_shapes = property(lambda self: list(self._scopes))
    variants = property(lambda self: list(self._variants))
    modes = property(lambda self: list(self._modes))
    replicates = property(lambda self: self._replicates)

    def speedup(self, impl, base, shape, mode):
        return self.cis.get((impl, base, shape, mode))


def _ci(ratio, lo, hi, se=None):
    return SpeedupCI(ratio, lo, hi, "replicates" if se is not None else "BCa", 3, se, None)


def _agreement_runs():
    """Two runs whose common ratios are five, each built to sit on an edge:
    R1 (S1, P2): A 1.10 [1.05, 1.15], B 1.05 [1.00, 1.10], SE 0.02 each: A's point on B's upper end,
       B's on A's lower end (both inside); z = log(1.10 / 1.05) / (0.02 sqrt 2) = 1.645 (inside);
       A faster, B within noise: a verdict that differs.
    R2 (S2, P1): A 0.97 [0.95, 1.00], B 1.00 [0.97, 1.03], no SE recorded: from the widths,
       log(1.00 / 0.95) / 3.92 = 0.01309 and log(1.03 / 0.97) / 3.92 = 0.01531; A's point on B's
       lower end, B's on A's upper end; z = log 0.97 / 0.02014 = -1.51 (inside).
    R3 (S2, P2): A 1.20 [1.15, 1.25], B 1.15 [1.12, 1.18], SE 0.012 each: z = 0.04256 / 0.01697
       = 2.51 (outside; 1.70 from the widths); B's point on A's lower end.
    R4 (S5, P1): A 1.10 [1.06, 1.14], B 1.00 [0.97, 1.03], no SE: 0.01856 and 0.01531, z = 3.96;
       neither point inside; A faster, B within noise: differs.
    R5 (S5, P2): A 1.0 [0.0, 2.0], no SE: no width on the log scale (z is NaN, not inside);
       B 1.0 [0.9, 1.1], SE 0.05; both points inside.
    Not counted: (S1, P1), where B has no interval (and A's comes first in the loop); S3 (a long
    shape, not a ladder one); S4 (not measured in B); cold (not a mode of B); the step pair
    (tma_q_first, two_ctas_per_sm) (tma_q_first is not in B)."""
    r = {(S1, P2): (_ci(1.10, 1.05, 1.15, 0.02), _ci(1.05, 1.00, 1.10, 0.02)),
         (S2, P1): (_ci(0.97, 0.95, 1.00), _ci(1.00, 0.97, 1.03)),
         (S2, P2): (_ci(1.20, 1.15, 1.25, 0.012), _ci(1.15, 1.12, 1.18, 0.012)),
         (S5, P1): (_ci(1.10, 1.06, 1.14), _ci(1.00, 0.97, 1.03)),
         (S5, P2): (_ci(1.0, 0.0, 2.0), _ci(1.0, 0.9, 1.1, 0.05))}
    a = {(*p, s, "hot"): ca for (s, p), (ca, _) in r.items()}
    b = {(*p, s, "hot"): cb for (s, p), (_, cb) in r.items()}
    a[(*P1, S1, "hot")] = _ci(1.3, 1.2, 1.4, 0.01)  # B has none here
    for s in (S3, S4):  # intervals far apart: counted, they would move every count
        a[(*P1, s, "hot")], b[(*P1, s, "hot")] = _ci(2.0, 1.9, 2.1, 0.01), _ci(1.0, 0.99, 1.01, 0.01)
    for key, ci in list(a.items()):
        a[key[:3] + ("cold",)] = b[key[:3] + ("cold",)] = ci
    steps = ["wgmma_overlap", "tma", "two_ctas_per_sm"]
    run_a = FakeRun({S1: "ladder", S2: "ladder", S3: "long", S4: "ladder", S5: "ladder"}, steps + ["tma_q_first"],
                    ["hot", "cold"], a)
    run_b = FakeRun({S1: "ladder", S2: "ladder", S3: "long", S5: "ladder"}, steps, ["hot"], b, replicates=2)
    a[("tma_q_first", "two_ctas_per_sm", S2, "hot")] = _ci(2.0, 1.9, 2.1, 0.01)
    b[("tma_q_first", "two_ctas_per_sm", S2, "hot")] = _ci(1.0, 0.99, 1.01, 0.01)
    return run_a, run_b


def test_agreement_counts_each_ratio_at_its_edges():
    agr = replication.agreement(*_agreement_runs())
    assert agr["ratios"] == 5 and agr["replicates"] == (3, 2)
    assert agr["a_in_b"] == pytest.approx(3 / 5)  # R1, R2, R5
    assert agr["b_in_a"] == pytest.approx(4 / 5)  # R1, R2, R3, R5
    assert agr["z_within"] == pytest.approx(2 / 5)  # R1, R2
    assert agr["expected_inside"] == pytest.approx(0.8342, abs=1e-4)  # P(|Z| < 1.96 / sqrt 2)
    assert agr["differ"] == [
        dict(step="two_ctas_per_sm", parent="tma", shape="(1, 8, 512, 64) non-causal", mode="hot",
             a="1.100× [1.050, 1.150]", a_verdict="faster", b="1.050× [1.000, 1.100]", b_verdict="within noise"),
        dict(step="tma", parent="wgmma_overlap", shape="(1, 8, 512, 64) causal", mode="hot",
             a="1.100× [1.060, 1.140]", a_verdict="faster", b="1.000× [0.970, 1.030]", b_verdict="within noise")]


def test_agreement_at_z_of_exactly_the_quantile_is_outside():
    # |z| < 1.959964: B's SE 0, A's chosen so that the log ratio over it is 1.959964 exactly
    d = math.log(1.02)
    se = d / 1.959964
    assert d / math.hypot(se, 0.0) == 1.959964  # the construction holds in floating point
    a = FakeRun({S1: "ladder"}, ["wgmma_overlap", "tma"], ["hot"], {(*P1, S1, "hot"): _ci(1.02, 1.0, 1.2, se)})
    b = FakeRun({S1: "ladder"}, ["wgmma_overlap", "tma"], ["hot"], {(*P1, S1, "hot"): _ci(1.0, 0.9, 1.1, 0.0)})
    assert replication.agreement(a, b)["z_within"] == 0.0


def test_agreement_of_runs_without_common_ratios_is_undefined():
    a = FakeRun({S1: "ladder"}, ["wgmma_overlap", "tma"], ["hot"], {})
    agr = replication.agreement(a, a)
    assert agr["ratios"] == 0 and agr["differ"] == []
    assert all(math.isnan(agr[k]) for k in ("a_in_b", "b_in_a", "z_within"))


def test_replication_rows_have_their_columns_in_order_even_when_empty(monkeypatch):
    for part in ("_step_rows", "_knockout_rows", "_bar_rows"):
        monkeypatch.setattr(replication, part, lambda a, b: [])
    monkeypatch.setattr(replication, "run_data", lambda run: run)
    tab = replication.rows(None, None)
    assert list(tab.columns) == ["kind", "what", "shape", "mode", "a", "a_lo", "a_hi", "a_verdict", "b", "b_lo",
                                 "b_hi", "b_verdict", "holds", "same_code"] and len(tab) == 0
    row = dict(kind="bar", what="w", shape="s", mode="hot", a=1.0, a_lo=0.9, a_hi=1.1, a_verdict="≥ 1.0×", b=1.0,
               b_lo=0.9, b_hi=1.1, b_verdict="below 1.0×", same_code="yes")
    monkeypatch.setattr(replication, "_bar_rows", lambda a, b: [dict(row)])
    tab = replication.rows(None, None)
    assert list(tab.columns)[-2:] == ["holds", "same_code"] and not tab["holds"].iloc[0]
