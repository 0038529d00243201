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
* A run may measure R independent replicates (separate processes). Samples
  given as ``{replicate: latencies}`` get intervals that include the variance
  between replicates (random effects; see ``replicated_speedup_ci``); one
  replicate, or a plain array, gives exactly the single-process interval.
* Two rows timed in one round robin (``RoundRobinSamples``: each sample's
  round recorded) are compared round by round: the GPU's clock state drifts
  through a process, and rows that stop at different times would otherwise
  be compared across different clock states (``round_log_ratios``).

Public API
----------
summarize, median_ci, relative_ci_halfwidth, speedup_ci, SpeedupCI,
replicated_speedup_ci, replicated_median, replicated_median_ci, random_effects,
RoundRobinSamples, round_log_ratios, MIN_ROUNDS, t_interval, variance_split, VarianceSplit,
leave_one_out, pooled, by_replicate,
cliffs_delta, mann_whitney_p, hodges_lehmann_log_ratio, benjamini_hochberg,
NOISE_BAND, interval_verdict, compare, Comparison, compare_rows, attention_flops, tflops, effective_gbps.
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
from scipy import stats as _st

__all__ = [
    "summarize",
    "median_ci",
    "relative_ci_halfwidth",
    "SpeedupCI",
    "speedup_ci",
    "replicated_speedup_ci",
    "RoundRobinSamples",
    "round_log_ratios",
    "MIN_ROUNDS",
    "VarianceSplit",
    "variance_split",
    "leave_one_out",
    "pooled",
    "by_replicate",
    "replicated_median",
    "replicated_median_ci",
    "random_effects",
    "t_interval",
    "cliffs_delta",
    "mann_whitney_p",
    "hodges_lehmann_log_ratio",
    "benjamini_hochberg",
    "NOISE_BAND",
    "interval_verdict",
    "Comparison",
    "compare",
    "compare_rows",
    "attention_flops",
    "tflops",
    "effective_gbps",
]

# A change smaller than this (relative) is "within noise" whatever its p-value (Comparison.verdict).
NOISE_BAND = 0.01

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
    ``method`` is one of ``'BCa'``, ``'percentile'``, ``'exact'`` (one
    replicate), ``'replicates'`` (``replicated_speedup_ci``) or ``'rounds'``
    (one replicate compared round by round) and records which interval
    construction was actually used. With replicates or rounds, ``se_log`` is
    the standard error of ``log(ratio)`` and ``df`` the degrees of freedom of
    its t quantile (``inf``: normal); both are None otherwise. ``by_round``:
    the ratio is the round-paired one (``round_log_ratios``), not the ratio
    of medians.
    """

    ratio: float
    lo: float
    hi: float
    method: str
    replicates: int = 1
    se_log: Optional[float] = None
    df: Optional[float] = None
    by_round: bool = False


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
    paired: bool = True,
) -> SpeedupCI:
    """CI for the speedup of A over B, ``median(B) / median(A)``.

    ``a_us`` and ``b_us`` are latencies, or ``{replicate: latencies}`` for a
    run of several replicates. Where both have two or more replicates (in
    common, when ``paired``), the interval is ``replicated_speedup_ci``'s;
    otherwise the samples are pooled and the one-replicate bootstrap below is
    used, so that a plain array or a single replicate gives exactly the
    interval of a run recorded before replicates existed.

    One replicate: two independent samples are resampled separately (scipy's
    ``paired=False``): iteration *i* of A has nothing to do with iteration *i* of B.

    Strategy (each step recorded in ``SpeedupCI.method``):

    1. ``'BCa'``: bias-corrected and accelerated bootstrap, which corrects
       the skew of a ratio statistic better than the plain percentile method.
    2. ``'percentile'``: used if BCa raises, warns about degenerate data or
       yields NaN (typical with heavily tied timings, where the jackknife
       acceleration is 0/0).
    3. ``'exact'``: ``lo = hi = ratio`` when the bootstrap distribution is
       itself degenerate (e.g. all timings identical) - there is no sampling
       variability to express.

    Samples of one round robin (``RoundRobinSamples`` of the same interleave on both sides) are
    compared round by round instead (``replicated_speedup_ci``; for one replicate, the round
    bootstrap's normal interval, method ``'rounds'``).

    Deterministic for a given ``seed``.
    """
    a_reps, b_reps = by_replicate(a_us, "a_us"), by_replicate(b_us, "b_us")
    if paired and len(a_reps) == 1 and set(a_reps) == set(b_reps):
        d = _round_pairs(a_us, b_us, list(a_reps))
        if d is not None:
            return _round_paired_ci(d[0], confidence, n_resamples, seed)
    if paired and len(set(a_reps) & set(b_reps)) >= 2:
        return replicated_speedup_ci(a_us, b_us, confidence, n_resamples, seed, paired=True)
    if not paired and max(len(a_reps), len(b_reps)) >= 2:
        return replicated_speedup_ci(a_reps, b_reps, confidence, n_resamples, seed, paired=False)
    return _one_replicate_ci(pooled(a_reps), pooled(b_reps), confidence, n_resamples, seed)


def _one_replicate_ci(a, b, confidence, n_resamples, seed) -> SpeedupCI:
    """The single-process interval: BCa, else percentile, else exact (speedup_ci's steps 1-3)."""
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
# Replicates: intervals that include the variance between processes
# --------------------------------------------------------------------------

Samples = Union[Sequence[float], np.ndarray, Mapping[int, Sequence[float]]]

# Elements of one bootstrap block (resamples x pooled samples): bounds memory at ~32 MB of float64.
_BOOT_BLOCK = 4_000_000


def by_replicate(x: Samples, name: str = "samples") -> dict:
    """``{replicate: latencies}`` (replicates in ascending order, empty ones left out) from a
    mapping, or ``{0: latencies}`` from one array: the one replicate of an older run."""
    if isinstance(x, Mapping):
        reps = {int(k): _as_positive_1d(v, name) for k, v in sorted(x.items()) if np.size(v)}
        if not reps:
            raise ValueError(f"{name} must be non-empty")
        return reps
    return {0: _as_positive_1d(x, name)}


def pooled(x: Samples) -> np.ndarray:
    """Every sample of every replicate, in replicate order (a plain array as it is)."""
    reps = by_replicate(x)
    return reps[0] if len(reps) == 1 and 0 in reps else np.concatenate(list(reps.values()))


# The fewest rounds in common, in every replicate, for two rows to be compared round by round (the
# fewest a row takes under the stopping rule): with fewer the median over rounds is little more than one
# round's ratio, and the rows are compared by their medians instead.
MIN_ROUNDS = 3


class RoundRobinSamples(dict):
    """``{replicate: latencies}`` of one row, with the round of the round robin each sample was taken
    in (``rounds``: ``{replicate: round numbers}``, one per sample) and the round robin's identity
    (``interleave``: one run's shape and mode, say). Everywhere a plain mapping goes it acts as one;
    two of them from the same interleave are compared round by round (``round_log_ratios``)."""

    def __init__(self, latencies: Mapping, rounds: Mapping, interleave):
        super().__init__(latencies)
        self.rounds = {k: np.asarray(rounds[k]) for k in latencies}
        for k, v in latencies.items():
            if self.rounds[k].shape != np.shape(v):
                raise ValueError(f"replicate {k}: rounds must give one round per sample "
                                 f"({self.rounds[k].shape} rounds for {np.shape(v)} samples)")
        self.interleave = interleave


def _medians_by_round(x: np.ndarray, rounds: np.ndarray):
    """(rounds in ascending order, the median of x's samples in each), exact as np.median: sort by
    round then value, and take the middle one or two of each round's run."""
    order = np.lexsort((x, rounds))
    xs, rs = x[order], rounds[order]
    keys, start, count = np.unique(rs, return_index=True, return_counts=True)
    return keys, (xs[start + (count - 1) // 2] + xs[start + count // 2]) / 2


def round_log_ratios(a, a_rounds, b, b_rounds) -> np.ndarray:
    """For every round both rows were sampled in (ascending), log(median of B's samples in that round
    / median of A's): the speedup of A over B with both in the same clock and thermal state. A
    process's clock drifts (on an H100 at Llama-3-70B S = 8192 it fell from about 1850 to 1740 MHz
    once only rows at full tensor-core load were left in the round robin), so the ratio of whole-row
    medians compares rows at different states when they stopped at different rounds; the per-round
    ratio does not (data/explorations/2026-11-26-cold-drift/)."""
    a, b = _as_positive_1d(a, "a"), _as_positive_1d(b, "b")
    ra, rb = np.asarray(a_rounds), np.asarray(b_rounds)
    if ra.shape != a.shape or rb.shape != b.shape:
        raise ValueError("round_log_ratios needs one round per sample on each side")
    ka, ma = _medians_by_round(a, ra)
    kb, mb = _medians_by_round(b, rb)
    common, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    return np.log(mb[ib] / ma[ia])


def _round_pairs(a, b, keys) -> Optional[list]:
    """round_log_ratios for each replicate of `keys`, when a and b are RoundRobinSamples of one
    interleave with at least MIN_ROUNDS rounds in common in every one of them; else None (the
    ratio of medians applies)."""
    if not (isinstance(a, RoundRobinSamples) and isinstance(b, RoundRobinSamples)) or a.interleave != b.interleave:
        return None
    out = [round_log_ratios(a[k], a.rounds[k], b[k], b.rounds[k]) for k in keys]
    return out if all(d.size >= MIN_ROUNDS for d in out) else None


def _keep_rounds(reps: dict, original):
    """by_replicate's plain mapping `reps` as RoundRobinSamples again where `original` was one."""
    if not isinstance(original, RoundRobinSamples):
        return reps
    return RoundRobinSamples(reps, {k: original.rounds[k] for k in reps}, original.interleave)


def _subset(reps: dict, keys) -> dict:
    """The replicates `keys` of reps, rounds kept where it has them."""
    return _keep_rounds({k: reps[k] for k in keys}, reps)


def _median_var(d: np.ndarray, n_resamples: int, rng) -> float:
    """Bootstrap variance of median(d), d's values resampled with replacement (rounds, here)."""
    return float(np.var(_bootstrap_medians(d, n_resamples, rng), ddof=1))


def _round_paired_ci(d: np.ndarray, confidence, n_resamples, seed) -> SpeedupCI:
    """One replicate compared round by round: exp(median(d)) with the normal interval of the round
    bootstrap's variance (what replicated_speedup_ci takes as its within part)."""
    est = float(np.median(d))
    var = _median_var(d, n_resamples, np.random.default_rng(seed))
    ratio = math.exp(est)
    if var <= 0:
        return SpeedupCI(ratio, ratio, ratio, "exact", 1, 0.0, math.inf, True)
    lo, hi = t_interval(est, var, math.inf, confidence)
    return SpeedupCI(ratio, math.exp(lo), math.exp(hi), "rounds", 1, math.sqrt(var), math.inf, True)


def _replicate_log_ratios(a, b, keys, n_resamples, rng):
    """(each replicate's log speedup of A over B, its sampling variance, whether paired by round):
    the median of its round_log_ratios with their bootstrap variance over rounds where the rows
    share a round robin (_round_pairs), else its log ratio of medians with the two medians'
    bootstrap variances."""
    rounds = _round_pairs(a, b, keys)
    if rounds is not None:
        return (np.array([float(np.median(d)) for d in rounds]),
                np.array([_median_var(d, n_resamples, rng) for d in rounds]), True)
    per_rep = np.array([np.log(np.median(b[k]) / np.median(a[k])) for k in keys])
    within = np.array([_log_median_var(a[k], n_resamples, rng) + _log_median_var(b[k], n_resamples, rng)
                       for k in keys])
    return per_rep, within, False


def replicated_median(x: Samples) -> float:
    """The median over replicates: the geometric mean of the replicates' own medians (the median
    itself for one replicate). Ratios of these are the speedups of replicated_speedup_ci where rows
    are compared by their medians, so that a table's medians and its speedups agree there (rows of
    one round robin are compared round by round, and may differ from the ratio of these)."""
    reps = by_replicate(x)
    if len(reps) == 1:
        return float(np.median(next(iter(reps.values()))))
    return float(np.exp(np.mean([np.log(np.median(v)) for v in reps.values()])))


def _resampled_medians(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """np.median(x[idx], axis=1), bit for bit, without sorting each row: a resample's median is an
    order statistic of x. Count each row's draws per rank of x, run one cumulative count over all
    rows (row r's counts end at (r + 1) n), and find the middle order statistics by binary search
    (about 2.4x faster than partitioning every row, which the report's replicated intervals did
    for tens of seconds)."""
    n, m = x.size, idx.shape[0]
    order = np.argsort(x, kind="stable")
    rank = np.empty(n, dtype=np.intp)
    rank[order] = np.arange(n)
    offsets = np.arange(m) * n
    drawn = rank[idx]
    drawn += offsets[:, None]
    at_or_below = np.cumsum(np.bincount(drawn.ravel(), minlength=m * n))
    lo = np.searchsorted(at_or_below, offsets + (n - 1) // 2, side="right") - offsets  # odd n: lo == hi
    hi = np.searchsorted(at_or_below, offsets + n // 2, side="right") - offsets
    xs = x[order]
    return (xs[lo] + xs[hi]) / 2  # np.median's mean of the two middle values (the value itself when one)


def _bootstrap_medians(x: np.ndarray, n_resamples: int, rng) -> np.ndarray:
    """The medians of n_resamples resamples of x with replacement, in blocks that bound memory."""
    draws = np.empty(n_resamples)
    step = max(1, _BOOT_BLOCK // x.size)
    for start in range(0, n_resamples, step):
        m = min(step, n_resamples - start)
        draws[start:start + m] = _resampled_medians(x, rng.integers(0, x.size, size=(m, x.size)))
    return draws


def _log_median_var(x: np.ndarray, n_resamples: int, rng) -> float:
    """Bootstrap variance of log(median(x)): x's samples resampled with replacement (the
    within-replicate level of a two-level bootstrap)."""
    return float(np.var(np.log(_bootstrap_medians(x, n_resamples, rng)), ddof=1))


def _t_quantile(confidence: float, df: float) -> float:
    q = 0.5 + confidence / 2.0
    return float(_st.norm.ppf(q)) if not np.isfinite(df) else float(_st.t.ppf(q, df))


def t_interval(estimate: float, var: float, df: float, confidence: float = 0.95) -> Tuple[float, float]:
    """estimate -+ t_df sqrt(var) (df = inf: the normal quantile)."""
    half = _t_quantile(confidence, df) * math.sqrt(max(var, 0.0))
    return estimate - half, estimate + half


def replicated_median_ci(x: Samples, confidence: float = 0.95, n_resamples: int = 2000,
                         seed: int = 0) -> Tuple[float, float]:
    """CI of replicated_median: median_ci's order statistics for one replicate; over R >= 2, the
    random-effects t interval of the mean log median (random_effects), exponentiated."""
    reps = by_replicate(x)
    if len(reps) == 1:
        return median_ci(next(iter(reps.values())), confidence)
    rng = np.random.default_rng(seed)
    logs = [math.log(float(np.median(v))) for v in reps.values()]
    var, df = random_effects(logs, [_log_median_var(v, n_resamples, rng) for v in reps.values()])
    lo, hi = t_interval(float(np.mean(logs)), var, df, confidence)
    return math.exp(lo), math.exp(hi)


def random_effects(per_replicate, within) -> Tuple[float, float]:
    """(variance, degrees of freedom) of the mean of R replicates' estimates.

    ``per_replicate``: the R estimates; ``within``: each one's sampling variance (bootstrap).
    The variance is the larger of V_within = sum(within) / R^2 (what sampling alone explains,
    known precisely) and S^2 / R, S^2 the estimates' sample variance (it holds the
    between-replicate variance and their sampling error alike: unbiased for the whole variance,
    with R - 1 degrees of freedom). Satterthwaite's df, (R - 1) (var / (S^2 / R))^2, is R - 1
    where the replicates' spread decides and grows without bound as it falls below V_within.
    Used for speedups (replicated_speedup_ci), medians (replicated_median_ci) and the factorial's
    effects (lab.studies.factorial)."""
    per_replicate, within = np.asarray(per_replicate, dtype=np.float64), np.asarray(within, dtype=np.float64)
    R = per_replicate.size
    between = float(np.var(per_replicate, ddof=1)) / R
    var = max(float(np.sum(within)) / R ** 2, between)
    df = (R - 1) * (var / between) ** 2 if between > 0 else math.inf
    return var, df


def replicated_speedup_ci(
    a_reps: Mapping[int, Sequence[float]],
    b_reps: Mapping[int, Sequence[float]],
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    paired: bool = True,
) -> SpeedupCI:
    """Speedup of A over B over R replicates (separate processes: inputs, allocations, clock state
    and interleaving order drawn anew), ``replicated_median(B) / replicated_median(A)``: the
    geometric mean of the replicates' own ratios of medians. Its interval includes the variance
    between replicates.

    Model, on the log scale: replicate r's log ratio theta_r = theta + u_r + e_r, u_r the
    replicate's random effect (variance tau^2), e_r its sampling error (variance w_r). Two levels
    of resampling give the two parts: within each replicate its samples are bootstrapped (w_r);
    across replicates the spread S^2 of the theta_r estimates tau^2 + mean(w_r). The estimate
    mean(theta_r) has variance

        SE^2 = max(sum(w_r) / R^2, S^2 / R)

    and the interval is log ratio +- t_df SE with Satterthwaite's df (random_effects): a t
    interval over the replicates (Kalibera and Jones 2013), never narrower than the interval the
    within-replicate sampling alone supports.

    Why not the plain two-level percentile bootstrap (draw replicates with replacement, then
    samples within each)? With R = 3 it has ten distinct replicate draws, shrinks the between part
    by (R - 1) / R and counts the within part twice. In tests/test_replicates_stats.py's
    simulations (R = 3, between-replicate SD three times one replicate's sampling SE, 200 runs)
    it covers the true ratio 84 % of the time, the one-process interval of the pooled samples
    59 %, this interval 97.5 %. The price shows where there is no between variance: it covers
    all 120 simulated runs at about 1.8 times the one-process interval's width (a t quantile with
    few df).

    ``paired``: A and B were measured in the same processes (one run: replicate r of A shares its
    process with replicate r of B, so process-wide effects cancel in theta_r); the replicates in
    common are used. Where both are RoundRobinSamples of one interleave, theta_r is the median of
    the replicate's round_log_ratios and w_r its bootstrap variance over rounds (MIN_ROUNDS in
    common in every replicate; else the ratio of medians): a clock that drifts within the process
    then moves both rows alike. Unpaired (two runs): each side's log median gets its own SE^2 over
    its own replicates, the two add, with Welch-Satterthwaite df.
    """
    a = by_replicate(a_reps, "a_reps")
    b = by_replicate(b_reps, "b_reps")
    rng = np.random.default_rng(seed)
    by_round = False
    if paired:
        keys = sorted(set(a) & set(b))
        if len(keys) < 2:
            raise ValueError("paired replicated_speedup_ci needs at least two replicates in common")
        per_rep, within, by_round = _replicate_log_ratios(_keep_rounds(a, a_reps), _keep_rounds(b, b_reps),
                                                          keys, n_resamples, rng)
        var, df = random_effects(per_rep, within)
        log_ratio, replicates = float(np.mean(per_rep)), len(keys)
    else:
        sides = []
        for reps in (a, b):
            per_rep = np.array([np.log(np.median(x)) for x in reps.values()])
            within = np.array([_log_median_var(x, n_resamples, rng) for x in reps.values()])
            sides.append(random_effects(per_rep, within) if per_rep.size >= 2 else (float(within[0]), math.inf))
        var = sides[0][0] + sides[1][0]
        den = sum(v * v / d for v, d in sides if np.isfinite(d) and v > 0)
        df = var * var / den if den > 0 else math.inf
        log_ratio = math.log(replicated_median(b)) - math.log(replicated_median(a))
        replicates = max(len(a), len(b))
    ratio = math.exp(log_ratio)
    if var <= 0:
        return SpeedupCI(ratio, ratio, ratio, "exact", replicates, 0.0, df, by_round)
    se = math.sqrt(var)
    half = _t_quantile(confidence, df) * se
    return SpeedupCI(ratio, ratio * math.exp(-half), ratio * math.exp(half), "replicates", replicates, se, df,
                     by_round)


@dataclass(frozen=True)
class VarianceSplit:
    """How the variance of one implementation's log median splits (``variance_split``).

    ``between``: tau^2, the variance of the replicates' log medians beyond what their sampling
    explains (method of moments, clipped at 0); ``within``: the sampling variance of one
    replicate's log median (bootstrap, averaged over replicates). Both on the log scale, so
    ``100 * sqrt(v)`` is about a relative SD in %.
    """

    replicates: int
    between: float
    within: float

    @property
    def between_share(self) -> float:
        total = self.between + self.within
        return self.between / total if total > 0 else 0.0


def variance_split(reps: Mapping[int, Sequence[float]], n_resamples: int = 500, seed: int = 0) -> VarianceSplit:
    """One-way random-effects split of an implementation's log median over R >= 2 replicates:
    E[S^2] = tau^2 + mean within variance, so tau^2 = max(0, S^2 - mean within)."""
    r = by_replicate(reps, "reps")
    if len(r) < 2:
        raise ValueError("variance_split needs at least two replicates")
    rng = np.random.default_rng(seed)
    within = float(np.mean([_log_median_var(x, n_resamples, rng) for x in r.values()]))
    s2 = float(np.var([np.log(np.median(x)) for x in r.values()], ddof=1))
    return VarianceSplit(len(r), max(0.0, s2 - within), within)


def leave_one_out(
    a_reps: Mapping[int, Sequence[float]],
    b_reps: Mapping[int, Sequence[float]],
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list:
    """Calibration of the replicated interval on one (A, B) pair of R >= 3 paired replicates.

    For each replicate r left out: its own ratio (the point: the ratio of medians, or the median
    of its round_log_ratios where the rows share a round robin, as replicated_speedup_ci), the interval that
    ``replicated_speedup_ci`` gives from the other R - 1 replicates (``lo``, ``hi``, ``covered``),
    and the prediction interval for one new replicate that the same model implies
    (``pred_lo``, ``pred_hi``, ``pred_covered``): log ratio +- t_df SE sqrt(m + 1), m = R - 1
    replicates held in (a new replicate's estimate has m times the variance of their mean).

    A calibrated interval for the mean covers a single new replicate's point less often than its
    confidence: ``expected_covered`` = P(|T_df| < t_df / sqrt(m + 1)) is that rate under the
    model (about 91 % at R = 3 where the between part dominates, 74 % where sampling does), while
    the prediction interval should cover ``confidence`` of the points. With R = 3 (one df held
    in) it covers about 90 % where the between part dominates: Satterthwaite's df trusts a spread
    of two replicates that is small by chance (tests/test_replicates_stats.py). Returns one dict
    per replicate left out (``by_round``: whether the pair was compared round by round).
    """
    a = _keep_rounds(by_replicate(a_reps, "a_reps"), a_reps)
    b = _keep_rounds(by_replicate(b_reps, "b_reps"), b_reps)
    keys = sorted(set(a) & set(b))
    if len(keys) < 3:
        raise ValueError("leave_one_out needs at least three replicates in common")
    rounds = _round_pairs(a, b, keys)  # decided once, on every replicate: one estimator for points and intervals
    if rounds is None:
        a, b = dict(a), dict(b)
        points = [float(np.median(b[k]) / np.median(a[k])) for k in keys]
    else:
        points = [math.exp(float(np.median(d))) for d in rounds]
    out = []
    for k, point in zip(keys, points):
        rest = [j for j in keys if j != k]
        ci = replicated_speedup_ci(_subset(a, rest), _subset(b, rest), confidence, n_resamples, seed)
        m = len(rest)
        df = ci.df if ci.df is not None else math.inf
        q = _t_quantile(confidence, df)
        half = q * (ci.se_log or 0.0) * math.sqrt(m + 1)
        pred_lo, pred_hi = ci.ratio * math.exp(-half), ci.ratio * math.exp(half)
        limit = q / math.sqrt(m + 1)
        expected = float(2 * (_st.norm.cdf(limit) if not np.isfinite(df) else _st.t.cdf(limit, df)) - 1)
        out.append(dict(left_out=k, point=point, ratio=ci.ratio, lo=ci.lo, hi=ci.hi, covered=ci.lo <= point <= ci.hi,
                        pred_lo=pred_lo, pred_hi=pred_hi, pred_covered=pred_lo <= point <= pred_hi,
                        expected_covered=expected, df=df, by_round=rounds is not None))
    return out


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
    noise_band: float = NOISE_BAND
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
        return interval_verdict(self.speedup.lo, self.speedup.hi, self.noise_band)


def interval_verdict(lo: float, hi: float, noise_band: float = NOISE_BAND) -> str:
    """A speedup interval's side of the noise band: ``'faster'`` when it lies wholly above
    ``1 + noise_band``, ``'slower'`` wholly below ``1 - noise_band``, else ``'within noise'``."""
    if lo > 1.0 + noise_band:
        return "faster"
    if hi < 1.0 - noise_band:
        return "slower"
    return "within noise"


def compare(
    a_us,
    b_us,
    noise_band: float = NOISE_BAND,
    alpha: float = 0.05,
    seed: int = 0,
    n_resamples: int = 2000,
    paired: bool = True,
) -> Comparison:
    """Compare latency samples of A against B (A is the candidate).

    The speedup CI is computed at confidence ``1 - alpha`` so the interval
    criterion and the test use the same error level. Given ``{replicate:
    latencies}``, the interval is the replicated one (speedup_ci) and the
    rank statistics (Cliff's delta, Hodges-Lehmann, Mann-Whitney) use the
    pooled samples: the verdict's interval criterion carries the variance
    between replicates, the p-value only the variance within them.
    ``paired=False``: A and B come from different runs (speedup_ci).
    """
    sp = speedup_ci(a_us, b_us, confidence=1.0 - alpha, n_resamples=n_resamples, seed=seed, paired=paired)
    a, b = pooled(a_us), pooled(b_us)
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
    noise_band: float = NOISE_BAND,
    alpha: float = 0.05,
    seed: int = 0,
    n_resamples: int = 2000,
    paired: bool = True,
) -> list:
    """Compare many (a_us, b_us) pairs and BH-adjust their p-values jointly.

    Each row uses the same ``seed``, so row *i* equals
    ``compare(a_i, b_i, seed=seed)`` except for ``p_adjusted``, which is
    the Benjamini-Hochberg value across all rows (one ablation table = one
    family of hypotheses).
    """
    rows = [
        compare(a, b, noise_band=noise_band, alpha=alpha, seed=seed,
                n_resamples=n_resamples, paired=paired)
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
    B: int, H: int, S: int, D: int, median_us: float, bytes_per_elem: int = 2, H_kv: int | None = None
) -> float:
    """Effective memory bandwidth in GB/s (1e9 bytes/s).

    Counts the compulsory traffic only: read Q and write O (B*H*S*D elements each), read K and V
    (B*H_kv*S*D each; H_kv = H by default), i.e. 2*B*(H + H_kv)*S*D*bytes_per_elem bytes (fp16/bf16
    by default): grouped K/V heads are read once, whatever number of query heads share them.
    """
    if median_us <= 0:
        raise ValueError("median_us must be positive")
    H_kv = H if H_kv is None else H_kv
    nbytes = 2.0 * B * (H + H_kv) * S * D * bytes_per_elem
    return nbytes / (median_us * 1e-6) / 1e9
