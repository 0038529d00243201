"""Rank-based effect size and test (Cliff's delta, Mann-Whitney U, Hodges-Lehmann) and the
Benjamini-Hochberg correction over a family of tests."""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats as _st

from lab.measure.stats.samples import as_1d, as_positive_1d


# Upper bound on the number of pairwise differences materialised by
# hodges_lehmann_log_ratio (4e6 float64 = 32 MB).
_HL_MAX_PAIRS = 4_000_000


def cliffs_delta(a, b) -> float:
    """Cliff's delta, ``P(a > b) - P(a < b)``, in [-1, 1].

    Computed from the Mann-Whitney U statistic of ``a`` (ties count 1/2):
    ``delta = 2U / (n_a n_b) - 1``.

    Sign convention: **positive when a tends to be LARGER than b**. For
    latencies that means positive = A is *slower*; +1 / -1 mean the samples
    are completely separated.
    """
    x = as_1d(a, "a")
    y = as_1d(b, "b")
    u = _st.mannwhitneyu(x, y, alternative="two-sided").statistic
    d = 2.0 * float(u) / (x.size * y.size) - 1.0
    return float(np.clip(d, -1.0, 1.0))  # guard rounding just outside [-1, 1]


def mann_whitney_p(a, b) -> float:
    """Two-sided Mann-Whitney U p-value (A vs B latency distributions).

    Rank-based, so robust to outliers and to the skew of latency data. If
    every value in both samples is identical, scipy may return NaN (zero
    variance); there is no evidence of a difference, so 1.0 is returned.
    """
    x = as_1d(a, "a")
    y = as_1d(b, "b")
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
    la = np.log(as_positive_1d(a, "a"))
    lb = np.log(as_positive_1d(b, "b"))
    if la.size * lb.size <= _HL_MAX_PAIRS:
        diffs = la[:, None] - lb[None, :]
    else:
        rng = np.random.default_rng(seed)
        i = rng.integers(0, la.size, _HL_MAX_PAIRS)
        j = rng.integers(0, lb.size, _HL_MAX_PAIRS)
        diffs = la[i] - lb[j]
    return float(np.median(diffs))


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
