"""Robust statistics for kernel-latency comparisons.

Everything here works on raw per-iteration latencies in microseconds and uses
only numpy + scipy (no torch), so it can run on a CPU-only analysis box.

Design choices (the "why"):

* GPU latencies are right-skewed with occasional large outliers (clock
  changes, preemption, cache-cold first launches), so every headline number is
  a *median*, and every interval is distribution-free (order statistics or
  bootstrap) rather than a normal-theory mean +- t*sd.
* Speedups are ratios of medians; their CIs come from a two-sample BCa
  bootstrap, with deterministic, recorded fallbacks for degenerate (tied)
  data so that a sweep never dies on one odd row.
* Significance needs *both* a (multiple-testing corrected) Mann-Whitney p-value
  and a practical-size criterion (the whole CI outside a noise band), because
  with thousands of samples a 0.1% shift is "significant" yet meaningless.

Public API
----------
summarize, median_ci, relative_ci_halfwidth, speedup_ci, SpeedupCI,
cliffs_delta, mann_whitney_p, hodges_lehmann_log_ratio, benjamini_hochberg,
compare, Comparison, compare_rows, attention_flops, tflops, effective_gbps.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Tuple

import numpy as np
from scipy import stats as _st

__all__ = [
    "summarize",
    "median_ci",
    "relative_ci_halfwidth",
    "SpeedupCI",
    "speedup_ci",
    "cliffs_delta",
    "mann_whitney_p",
    "hodges_lehmann_log_ratio",
    "benjamini_hochberg",
    "Comparison",
    "compare",
    "compare_rows",
    "attention_flops",
    "tflops",
    "effective_gbps",
]

# Upper bound on the number of pairwise differences materialised by
# hodges_lehmann_log_ratio (4e6 float64 = 32 MB).
_HL_MAX_PAIRS = 4_000_000

# scipy >= 1.15 (SPEC 7) prefers `rng=`; `random_state=` is the older spelling
# and is scheduled for deprecation. Both consume a Generator identically.
_BOOTSTRAP_RNG_KW = (
    "rng" if "rng" in inspect.signature(_st.bootstrap).parameters else "random_state"
)

_DegenerateDataWarning = getattr(_st, "DegenerateDataWarning", RuntimeWarning)


def _as_1d(x, name: str = "samples") -> np.ndarray:
    """Validate and convert to a 1-D float64 array of finite values."""
    arr = np.asarray(x, dtype=np.float64).ravel()
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values")
    return arr


def _as_positive_1d(x, name: str = "samples") -> np.ndarray:
    arr = _as_1d(x, name)
    # Ratios and logs of latencies are meaningless for non-positive values.
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be strictly positive latencies")
    return arr


# --------------------------------------------------------------------------
# Descriptive statistics
# --------------------------------------------------------------------------


def summarize(latencies_us) -> dict:
    """Robust summary of a latency sample (microseconds).

    Returns a dict with keys ``n`` (int) and ``median_us``, ``p10_us``,
    ``p90_us``, ``iqr_us`` (p75 - p25), ``mean_us``, ``min_us`` (floats).
    Percentiles use numpy's default linear interpolation.
    """
    x = _as_1d(latencies_us, "latencies_us")
    p10, p25, p50, p75, p90 = np.percentile(x, [10, 25, 50, 75, 90])
    return {
        "n": int(x.size),
        "median_us": float(p50),
        "p10_us": float(p10),
        "p90_us": float(p90),
        "iqr_us": float(p75 - p25),
        # The mean is reported only for reference: it is outlier-sensitive.
        "mean_us": float(np.mean(x)),
        # min approximates the "noise-free" cost; useful as a sanity bound.
        "min_us": float(np.min(x)),
    }


def median_ci(samples, confidence: float = 0.95) -> Tuple[float, float]:
    """Distribution-free confidence interval for the median.

    Uses order statistics: with ``i`` = #observations below the true median,
    ``i ~ Binomial(n, 1/2)`` for any continuous distribution, so
    ``P(X_(r) <= m <= X_(n-r+1)) >= 1 - 2*P(Bin(n, 1/2) <= r-1)``.
    We pick the largest symmetric ``r`` whose coverage is still >=
    ``confidence`` (i.e. the interval is conservative).

    For very small ``n`` (< 6 at 95%) no pair of order statistics reaches the
    requested coverage; the full range ``(min, max)`` is returned in that case
    (its actual coverage is ``1 - 2**(1-n)``).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")
    x = np.sort(_as_1d(samples))
    n = x.size
    tail = (1.0 - confidence) / 2.0
    k = np.arange(n + 1)
    cdf = _st.binom.cdf(k, n, 0.5)
    # Small tolerance so exact-boundary cases are not lost to rounding.
    ok = k[cdf <= tail * (1.0 + 1e-12)]
    r = int(ok.max()) + 1 if ok.size else 1  # 1-based order-statistic rank
    r = min(r, (n + 1) // 2)  # never cross the middle
    return float(x[r - 1]), float(x[n - r])


def relative_ci_halfwidth(samples, confidence: float = 0.95) -> float:
    """Relative half-width of the median CI: max(med-lo, hi-med) / med.

    This is the quantity the adaptive stopping rule thresholds ("stop when
    the 95% CI of the median is within +-0.5% of the median" <=> value <=
    0.005). The max of the two sides is used because order-statistic CIs
    are asymmetric for skewed latency distributions.
    """
    x = _as_1d(samples)
    med = float(np.median(x))
    lo, hi = median_ci(x, confidence)
    half = max(med - lo, hi - med)
    if med <= 0:
        return float("inf")
    return float(half / med)


# --------------------------------------------------------------------------
# Speedup confidence interval
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SpeedupCI:
    """Speedup of A over B: ``ratio = median(B) / median(A)``.

    ``ratio > 1`` means A is faster ("A is `ratio` times faster than B").
    ``method`` is one of ``'BCa'``, ``'percentile'``, ``'exact'`` and records
    which interval construction was actually used.
    """

    ratio: float
    lo: float
    hi: float
    method: str


def _ratio_of_medians(a, b, axis=-1):
    # Vectorised statistic for scipy.stats.bootstrap: speedup of A over B.
    return np.median(b, axis=axis) / np.median(a, axis=axis)


def _bootstrap_ci(a, b, method, confidence, n_resamples, seed):
    """Run scipy's bootstrap; return (lo, hi) or None if it failed/degenerated."""
    kwargs = {_BOOTSTRAP_RNG_KW: np.random.default_rng(seed)}
    with warnings.catch_warnings():
        # Silence numeric RuntimeWarnings (0/0 in the BCa acceleration with
        # ties) because a NaN result is checked explicitly below, and turn the
        # degenerate-data warning into an exception so it is caught below.
        # (Order matters: the filter added last is matched first, and
        # DegenerateDataWarning subclasses RuntimeWarning.)
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("error", _DegenerateDataWarning)
        try:
            res = _st.bootstrap(
                (a, b),
                _ratio_of_medians,
                n_resamples=n_resamples,
                vectorized=True,
                paired=False,
                confidence_level=confidence,
                method=method,
                **kwargs,
            )
        except (_DegenerateDataWarning, Exception):  # noqa: BLE001
            return None
    lo = float(res.confidence_interval.low)
    hi = float(res.confidence_interval.high)
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
        return None
    return lo, hi


def speedup_ci(
    a_us,
    b_us,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> SpeedupCI:
    """Bootstrap CI for the speedup of A over B, ``median(B) / median(A)``.

    Two independent samples are resampled separately (``paired=False``):
    iteration *i* of A has nothing to do with iteration *i* of B.

    Strategy (each step recorded in ``SpeedupCI.method``):

    1. ``'BCa'``: bias-corrected and accelerated bootstrap, which corrects
       the skew of a ratio statistic better than the plain percentile method.
    2. ``'percentile'``: used if BCa raises, warns about degenerate data or
       yields NaN (typical with heavily tied timings, where the jackknife
       acceleration is 0/0).
    3. ``'exact'``: ``lo = hi = ratio`` when the bootstrap distribution is
       itself degenerate (e.g. all timings identical) - there is no sampling
       variability to express.

    Deterministic for a given ``seed``.
    """
    a = _as_positive_1d(a_us, "a_us")
    b = _as_positive_1d(b_us, "b_us")
    ratio = float(np.median(b) / np.median(a))

    # All values identical in both samples: every resample gives the same
    # ratio, so skip the bootstrap (it would only emit degenerate warnings).
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return SpeedupCI(ratio, ratio, ratio, "exact")

    ci = _bootstrap_ci(a, b, "BCa", confidence, n_resamples, seed)
    if ci is not None:
        return SpeedupCI(ratio, ci[0], ci[1], "BCa")

    ci = _bootstrap_ci(a, b, "percentile", confidence, n_resamples, seed)
    if ci is not None and ci[1] > ci[0]:
        return SpeedupCI(ratio, ci[0], ci[1], "percentile")

    # Zero-width or failed percentile interval: no measurable variability.
    return SpeedupCI(ratio, ratio, ratio, "exact")


# --------------------------------------------------------------------------
# Rank-based effect size and test
# --------------------------------------------------------------------------


def cliffs_delta(a, b) -> float:
    """Cliff's delta, ``P(a > b) - P(a < b)``, in [-1, 1].

    Computed from the Mann-Whitney U statistic of ``a`` (ties count 1/2):
    ``delta = 2U / (n_a n_b) - 1``.

    Sign convention: **positive when a tends to be LARGER than b**. For
    latencies that means positive = A is *slower*; +1 / -1 mean the samples
    are completely separated.
    """
    x = _as_1d(a, "a")
    y = _as_1d(b, "b")
    u = _st.mannwhitneyu(x, y, alternative="two-sided").statistic
    d = 2.0 * float(u) / (x.size * y.size) - 1.0
    return float(np.clip(d, -1.0, 1.0))  # guard rounding just outside [-1, 1]


def mann_whitney_p(a, b) -> float:
    """Two-sided Mann-Whitney U p-value (A vs B latency distributions).

    Rank-based, so robust to outliers and to the skew of latency data. If
    every value in both samples is identical, scipy may return NaN (zero
    variance); there is no evidence of a difference, so 1.0 is returned.
    """
    x = _as_1d(a, "a")
    y = _as_1d(b, "b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(_st.mannwhitneyu(x, y, alternative="two-sided").pvalue)
    if np.isnan(p):
        return 1.0
    return p


def hodges_lehmann_log_ratio(a, b, seed: int = 0) -> float:
    """Hodges-Lehmann estimate of the log latency ratio, log(A/B).

    Median over all pairs of ``log(a_i) - log(b_j)``: a robust shift
    estimator on the log scale (i.e. a multiplicative effect). Positive means
    A tends to be slower; ``exp(-value)`` is a robust speedup of A over B.

    If ``n_a * n_b > 4e6`` a deterministic (``seed``) random subsample of
    4e6 pairs is used to bound memory.
    """
    la = np.log(_as_positive_1d(a, "a"))
    lb = np.log(_as_positive_1d(b, "b"))
    if la.size * lb.size <= _HL_MAX_PAIRS:
        diffs = la[:, None] - lb[None, :]
    else:
        rng = np.random.default_rng(seed)
        i = rng.integers(0, la.size, _HL_MAX_PAIRS)
        j = rng.integers(0, lb.size, _HL_MAX_PAIRS)
        diffs = la[i] - lb[j]
    return float(np.median(diffs))


# --------------------------------------------------------------------------
# Multiple testing
# --------------------------------------------------------------------------


def _bh_fallback(p: np.ndarray) -> np.ndarray:
    # Step-up BH: adj_(i) = min_{k>=i} m * p_(k) / k, capped at 1.
    m = p.size
    order = np.argsort(p)
    ranked = p[order] * m / np.arange(1, m + 1)
    ranked = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(ranked, 1.0)
    return out


def benjamini_hochberg(pvalues) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (FDR control).

    Returned values are monotone in the raw p-values and capped at 1. NaN
    inputs are passed through as NaN and do not count towards the number of
    tests ``m`` (a row that could not be tested is not a hypothesis).
    """
    p = np.asarray(pvalues, dtype=np.float64).ravel()
    out = np.full(p.shape, np.nan)
    mask = ~np.isnan(p)
    if not mask.any():
        return out
    valid = p[mask]
    if np.any((valid < 0) | (valid > 1)):
        raise ValueError("p-values must be in [0, 1]")
    fdc = getattr(_st, "false_discovery_control", None)
    adj = fdc(valid, method="bh") if fdc is not None else _bh_fallback(valid)
    out[mask] = np.minimum(adj, 1.0)
    return out


# --------------------------------------------------------------------------
# Bundled comparison
# --------------------------------------------------------------------------


@dataclass
class Comparison:
    """Result of comparing latency samples of kernel A against kernel B.

    ``speedup`` is the speedup of A over B (ratio > 1: A faster).
    ``cliffs_delta`` and ``hl_log_ratio`` are positive when A is *slower*
    (A's latencies larger). ``p_adjusted`` starts equal to ``p_value`` and is
    overwritten by :func:`compare_rows` with the BH-adjusted value.
    """

    speedup: SpeedupCI
    cliffs_delta: float
    hl_log_ratio: float
    p_value: float
    p_adjusted: float
    noise_band: float = 0.01
    alpha: float = 0.05

    def verdict(self, p_adjusted: Optional[float] = None) -> str:
        """Return ``'faster'``, ``'slower'`` or ``'within noise'`` for A vs B.

        Significant only if the (corrected) p-value is < ``alpha`` AND the
        whole speedup CI lies outside ``[1 - noise_band, 1 + noise_band]``.
        Requiring both guards against tiny-but-"significant" shifts (large n)
        and against large-looking ratios from noisy, small samples.
        """
        p = self.p_adjusted if p_adjusted is None else p_adjusted
        if p is None or np.isnan(p) or not p < self.alpha:
            return "within noise"
        s = self.speedup
        if s.lo > 1.0 + self.noise_band:
            return "faster"
        if s.hi < 1.0 - self.noise_band:
            return "slower"
        return "within noise"


def compare(
    a_us,
    b_us,
    noise_band: float = 0.01,
    alpha: float = 0.05,
    seed: int = 0,
    n_resamples: int = 2000,
) -> Comparison:
    """Compare latency samples of A against B (A is the candidate).

    The speedup CI is computed at confidence ``1 - alpha`` so the interval
    criterion and the test use the same error level.
    """
    a = _as_positive_1d(a_us, "a_us")
    b = _as_positive_1d(b_us, "b_us")
    sp = speedup_ci(a, b, confidence=1.0 - alpha, n_resamples=n_resamples, seed=seed)
    p = mann_whitney_p(a, b)
    return Comparison(
        speedup=sp,
        cliffs_delta=cliffs_delta(a, b),
        hl_log_ratio=hodges_lehmann_log_ratio(a, b, seed=seed),
        p_value=p,
        p_adjusted=p,
        noise_band=noise_band,
        alpha=alpha,
    )


def compare_rows(
    pairs: Iterable[Tuple[Sequence[float], Sequence[float]]],
    noise_band: float = 0.01,
    alpha: float = 0.05,
    seed: int = 0,
    n_resamples: int = 2000,
) -> list:
    """Compare many (a_us, b_us) pairs and BH-adjust their p-values jointly.

    Each row uses the same ``seed``, so row *i* equals
    ``compare(a_i, b_i, seed=seed)`` except for ``p_adjusted``, which is
    the Benjamini-Hochberg value across all rows (one ablation table = one
    family of hypotheses).
    """
    rows = [
        compare(a, b, noise_band=noise_band, alpha=alpha, seed=seed,
                n_resamples=n_resamples)
        for a, b in pairs
    ]
    if rows:
        adj = benjamini_hochberg([r.p_value for r in rows])
        for r, q in zip(rows, adj):
            r.p_adjusted = float(q)
    return rows


# --------------------------------------------------------------------------
# Throughput
# --------------------------------------------------------------------------


def attention_flops(B: int, H: int, S: int, D: int, causal: bool) -> float:
    """The FLOP count of an attention forward pass, the study's one: 4*B*H*S*S*D (two matmuls,
    QK^T and PV, 2 FLOPs per MAC), halved for causal masking since only the lower triangle is
    computed."""
    flops = 4.0 * B * H * S * S * D
    return flops / 2.0 if causal else flops


def tflops(B: int, H: int, S: int, D: int, causal: bool, median_us: float) -> float:
    """Attention forward throughput in TFLOP/s (attention_flops over the latency)."""
    if median_us <= 0:
        raise ValueError("median_us must be positive")
    return attention_flops(B, H, S, D, causal) / (median_us * 1e-6) / 1e12


def effective_gbps(
    B: int, H: int, S: int, D: int, median_us: float, bytes_per_elem: int = 2
) -> float:
    """Effective memory bandwidth in GB/s (1e9 bytes/s).

    Counts the compulsory traffic only: read Q, K, V and write O, i.e.
    4*B*H*S*D*bytes_per_elem bytes (fp16/bf16 by default).
    """
    if median_us <= 0:
        raise ValueError("median_us must be positive")
    nbytes = 4.0 * B * H * S * D * bytes_per_elem
    return nbytes / (median_us * 1e-6) / 1e9
