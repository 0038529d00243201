"""Properties of the decision rules, checked with hypothesis (issue 20).

Derandomized (the examples are a function of the test alone) and few, so CI is deterministic and
fast. The invariants:
- a speedup interval covers the true ratio of medians about 95 % of the time, for samples of
  unequal sizes drawn from distributions whose medians are known;
- the interval and ratio scale with the data (latencies in other units give the same verdict);
- the verdict is monotone in the speedup: moving the interval up never turns "faster" into
  something else, nor anything into "slower";
- a bar row's level is monotone in its ratio and lower end;
- the tuned dispatch takes, per shape class, the configuration with the best geometric mean and
  only with its lower end above 1.
"""

import math

import numpy as np
import pandas as pd
import pytest

from lab.measure import stats
from lab.studies.tuning import dispatch as td
from lab.report import bar
from lab.kernels.shape import Shape
from lab.measure.stats import Comparison, SpeedupCI

pytest.importorskip("hypothesis", reason="hypothesis is not installed (make test installs it)")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.ladder import SM90_END as END  # noqa: E402 (the sm_90a branch's last step)

_QUIET = dict(derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FAST = settings(max_examples=40, **_QUIET)
SLOW = settings(max_examples=6, **_QUIET)


# --- interval coverage with a known ratio ------------------------------------------------------


@SLOW
@given(n_a=st.integers(20, 120), n_b=st.integers(20, 300), sigma=st.sampled_from([0.01, 0.05, 0.2]),
       ratio=st.sampled_from([0.8, 1.0, 1.03, 1.5]), shape=st.sampled_from(["lognormal", "gamma"]))
def test_speedup_interval_covers_the_known_ratio(n_a, n_b, sigma, ratio, shape):
    # B's latencies are drawn from `ratio` times A's distribution (lognormal, or 50 us plus a
    # right-skewed gamma tail), so the true median(B) / median(A) is `ratio` whatever the shape.
    # 40 draws of a 95 % interval: P(fewer than 32 hits) < 1e-4 if the coverage is at least 0.95.
    rng = np.random.default_rng(n_a * 1000 + n_b)
    hits = 0
    for i in range(40):
        if shape == "lognormal":
            a = 50.0 * np.exp(rng.normal(0, sigma, n_a))
            b = ratio * 50.0 * np.exp(rng.normal(0, sigma, n_b))
        else:
            g = 50.0 * sigma
            a = 50.0 + g * rng.gamma(2.0, 1.0, n_a)
            b = ratio * (50.0 + g * rng.gamma(2.0, 1.0, n_b))
        ci = stats.speedup_ci(a, b, n_resamples=400, seed=i)
        assert ci.lo <= ci.ratio <= ci.hi
        hits += ci.lo <= ratio <= ci.hi
    assert hits >= 32, hits


def test_speedup_interval_coverage_is_near_nominal_for_unequal_sizes():
    # 200 draws at n = 30 against 150: the coverage is 95 % +- 1.5 % (binomial sd), neither far
    # below (too narrow) nor ~100 % (too wide to tell anything apart)
    hits = 0
    for seed in range(200):
        rng = np.random.default_rng(20_000 + seed)
        a = 100.0 * np.exp(rng.normal(0, 0.05, 30))
        b = 1.2 * 100.0 * np.exp(rng.normal(0, 0.05, 150))
        ci = stats.speedup_ci(a, b, n_resamples=400, seed=seed)
        hits += ci.lo <= 1.2 <= ci.hi
    assert 0.88 <= hits / 200 <= 0.99, hits


@FAST
@given(seed=st.integers(0, 2**16), n_a=st.integers(8, 60), n_b=st.integers(8, 60),
       unit=st.sampled_from([1e-3, 0.37, 1000.0]), k=st.sampled_from([0.5, 2.0, 3.0]))
def test_speedup_interval_scales_with_the_data(seed, n_a, n_b, unit, k):
    rng = np.random.default_rng(seed)
    a = 10.0 * np.exp(rng.normal(0, 0.1, n_a))
    b = 12.0 * np.exp(rng.normal(0, 0.1, n_b))
    base = stats.speedup_ci(a, b, n_resamples=200, seed=1)
    same = stats.speedup_ci(unit * a, unit * b, n_resamples=200, seed=1)  # other units: the same
    scaled = stats.speedup_ci(a, k * b, n_resamples=200, seed=1)  # B k times slower: k times the speedup
    assert base.method == same.method == scaled.method
    for x, y in ((same.ratio, base.ratio), (same.lo, base.lo), (same.hi, base.hi), (scaled.ratio, k * base.ratio),
                 (scaled.lo, k * base.lo), (scaled.hi, k * base.hi)):
        assert math.isclose(x, y, rel_tol=1e-9)
    assert math.isclose(stats.speedup_ci(b, a, n_resamples=200, seed=1).ratio, 1 / base.ratio, rel_tol=1e-12)
    assert base.ratio == float(np.median(b) / np.median(a))


@FAST
@given(seed=st.integers(0, 2**16), n=st.integers(1, 400), confidence=st.sampled_from([0.9, 0.95, 0.99]))
def test_median_interval_is_a_symmetric_pair_of_order_statistics_around_the_median(seed, n, confidence):
    x = np.random.default_rng(seed).exponential(1.0, n)
    lo, hi = stats.median_ci(x, confidence)
    s = np.sort(x)
    r = int(np.searchsorted(s, lo)) + 1  # 1-based rank of lo
    assert lo == s[r - 1] and hi == s[n - r]  # ranks r and n - r + 1
    assert lo <= np.median(x) <= hi
    # coverage of the pair, from the binomial: 1 - 2 P(Bin(n, 1/2) <= r - 1) >= confidence, and the
    # next pair inward would fall below it (or would cross the middle)
    from scipy.stats import binom

    if n >= 6 or confidence < 0.95:
        cover = 1 - 2 * binom.cdf(r - 1, n, 0.5)
        assert cover >= confidence - 1e-9 or r == 1
        if r + 1 <= (n + 1) // 2:
            assert 1 - 2 * binom.cdf(r, n, 0.5) < confidence + 1e-9


# --- monotone verdicts ---------------------------------------------------------------------------

ORDER = {"slower": 0, "within noise": 1, "faster": 2}


@FAST
@given(r1=st.floats(0.5, 2.0), dr=st.floats(0.0, 1.0), lw=st.floats(0.0, 0.2), hw=st.floats(0.0, 0.2),
       p=st.floats(0.0, 1.0), band=st.sampled_from([0.0, 0.01, 0.05]))
def test_verdict_is_monotone_in_the_speedup(r1, dr, lw, hw, p, band):
    def verdict(r):
        c = Comparison(SpeedupCI(r, r * math.exp(-lw), r * math.exp(hw), "BCa"), 0.0, 0.0, p, p, noise_band=band)
        return c.verdict()

    v1, v2 = verdict(r1), verdict(r1 + dr)
    assert ORDER[v1] <= ORDER[v2], (v1, v2)
    if p >= 0.05:
        assert v1 == v2 == "within noise"
    # and the verdict agrees with the interval: faster only wholly above 1 + band, slower only below
    lo, hi = r1 * math.exp(-lw), r1 * math.exp(hw)
    assert (v1 == "faster") == (p < 0.05 and lo > 1 + band)
    assert (v1 == "slower") == (p < 0.05 and hi < 1 - band)


LEVELS = {"below 1.0×": 0, "lower end ≤ 0.99": 1, "≥ 1.0×": 2, "≥ 1.10×": 3}


class _OneRow:
    """Two bar rows (one shape each) with given ratio and lower end, for lab.report.bar.bar_rows."""

    shapes = [Shape(1, 8, 512, 64, False), Shape(4, 16, 512, 64, False)]

    def __init__(self, pairs):
        self.pairs = dict(zip(self.shapes, pairs))
        self.modes, self.measured_shapes, self.build, self.env = ["hot"], list(self.shapes), {}, {}

    def fastest_sdpa(self, shape, mode):
        return "sdpa_cudnn"

    def speedup(self, impl, base, shape, mode):
        r, lo = self.pairs[shape]
        return SpeedupCI(r, lo, r + 0.1, "BCa") if base == "sdpa_cudnn" else None

    def median(self, impl, shape, mode):
        return None


@FAST
@given(r=st.floats(0.8, 1.3), dr=st.floats(0.0, 0.3), below=st.floats(0.0, 0.2), dlo=st.floats(0.0, 0.3))
def test_bar_level_is_monotone_in_ratio_and_lower_end(r, dr, below, dlo):
    lo = r - below
    rows = bar.bar_rows(_OneRow([(r, lo), (r + dr, min(lo + dlo, r + dr))]), "step")
    levels = [LEVELS[bar.row_level(x)] for x in rows.itertuples()]
    assert levels[0] <= levels[1], rows[["ratio", "lo"]]
    for x, level in zip(rows.itertuples(), levels):  # and the level is what the bar's rule says
        assert (level >= 2) == (x.ratio >= 1.0 and x.lo > 0.99)
        assert (level == 3) == (x.ratio >= 1.10 and x.lo > 1.05)
        assert (level == 0) == (x.ratio < 1.0)


# --- the tuned dispatch's choice ---------------------------------------------------------------------

CONFIGS = {64: [f"{END}@bc64=64", f"{END}@st64=2", f"{END}@st64=3"],
           128: [f"{END}@st128=2", f"{END}@st128=3", f"{END}@bc128=64"]}
SHAPES = [(4, 16, 512, 64, False), (8, 16, 256, 64, False), (4, 16, 4096, 128, True), (2, 16, 8192, 128, True)]


@FAST
@given(data=st.data())
def test_dispatch_takes_the_best_geometric_mean_with_its_lower_end_above_1(data):
    rows, trial = [], 0
    for D in (64, 128):
        for impl in [END] + CONFIGS[D]:
            trial += 1
            for B, H, S, d, c in [s for s in SHAPES if s[3] == D]:
                r = 1.0 if impl == END else data.draw(st.floats(0.9, 1.1))
                h = data.draw(st.floats(0.001, 0.05))
                rows.append(dict(kind="trial", status="ok", mode="hot", trial=trial, impl=impl, B=B, H=H, S=S, D=d,
                                 causal=c, config="{}", ratio_to_default=r, ratio_to_default_lo=r * math.exp(-h),
                                 ratio_to_default_hi=r * math.exp(h), h=h))
    tuning = pd.DataFrame(rows)
    table = td.choose_table(tuning, run_id="R")
    # Each row's interval is r * exp(+-h): a log standard error of h / z. The mean of n logs has
    # standard error sqrt(sum h^2) / (n z), so the geometric mean's lower end is
    # gm * exp(-sqrt(sum h^2) / n): z cancels.
    classes = [td.shape_class(d, c, s) for d, c, s in zip(tuning.D, tuning.causal, tuning.S)]
    for cls, g in tuning.assign(cls=classes).groupby("cls"):
        gm = g.groupby("impl")["ratio_to_default"].apply(lambda x: math.exp(np.log(x).mean()))
        best = gm.idxmax()
        h = g[g["impl"] == best]["h"]
        lo = gm[best] * math.exp(-math.sqrt((h ** 2).sum()) / len(h))
        assert (cls in table["classes"]) == (best != END and lo > 1.0), (cls, best, lo)
        if cls in table["classes"]:
            entry = table["classes"][cls]
            assert entry["impl"] == best and entry["shapes"] == 2
            assert math.isclose(entry["ratio"], gm[best], rel_tol=1e-9)
            assert math.isclose(entry["ci_lo"], lo, rel_tol=1e-9)
