"""One row's latencies described: summary statistics and the distribution-free interval of the median."""

from __future__ import annotations

import functools
from typing import Tuple

import numpy as np
from scipy import stats as _st

from lab.measure.stats.samples import as_1d


def summarize(latencies_us) -> dict:
    """Robust summary of a latency sample (microseconds).

    Returns a dict with keys ``n`` (int) and ``median_us``, ``p10_us``,
    ``p90_us``, ``iqr_us`` (p75 - p25), ``mean_us``, ``min_us`` (floats).
    Percentiles use numpy's default linear interpolation.
    """
    x = as_1d(latencies_us, "latencies_us")
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
    x = np.sort(as_1d(samples))
    n = x.size
    r = _cached_median_ci_rank(n, confidence)
    return float(x[r - 1]), float(x[n - r])


def _median_ci_rank(n: int, confidence: float) -> int:
    """median_ci's 1-based order-statistic rank for n samples. A function of (n, confidence) only,
    so it is computed once per pair (_cached_median_ci_rank): the stopping rule asks for it after
    every block of samples, and scipy's binomial CDF cost a replicate seconds of GPU idle time
    between blocks."""
    tail = (1.0 - confidence) / 2.0
    k = np.arange(n + 1)
    cdf = _st.binom.cdf(k, n, 0.5)
    # Small tolerance so exact-boundary cases are not lost to rounding.
    ok = k[cdf <= tail * (1.0 + 1e-12)]
    r = int(ok.max()) + 1 if ok.size else 1  # 1-based order-statistic rank
    return min(r, (n + 1) // 2)  # never cross the middle


_cached_median_ci_rank = functools.lru_cache(maxsize=4096)(lambda n, confidence: _median_ci_rank(n, confidence))


def relative_ci_halfwidth(samples, confidence: float = 0.95) -> float:
    """Relative half-width of the median CI: max(med-lo, hi-med) / med.

    This is the quantity the adaptive stopping rule thresholds ("stop when
    the 95% CI of the median is within +-0.5% of the median" <=> value <=
    0.005). The max of the two sides is used because order-statistic CIs
    are asymmetric for skewed latency distributions.
    """
    x = as_1d(samples)
    med = float(np.median(x))
    lo, hi = median_ci(x, confidence)
    half = max(med - lo, hi - med)
    if med <= 0:
        return float("inf")
    return float(half / med)
