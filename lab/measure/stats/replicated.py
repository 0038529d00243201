"""Intervals over replicates (separate processes): random effects with a t quantile, round-paired ratios,
the variance split between and within processes, and the leave-one-replicate-out check."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence, Tuple

import numpy as np
from scipy import stats as _st

from lab.measure.stats.samples import Samples, by_replicate, keep_rounds, pooled, round_pairs, subset_replicates
from lab.measure.stats.descriptive import median_ci
from lab.measure.stats.bootstrap import SpeedupCI, log_median_var, median_var, one_replicate_ci


def _t_quantile(confidence: float, df: float) -> float:
    q = 0.5 + confidence / 2.0
    return float(_st.norm.ppf(q)) if not np.isfinite(df) else float(_st.t.ppf(q, df))


def t_interval(estimate: float, var: float, df: float, confidence: float = 0.95) -> Tuple[float, float]:
    """estimate -+ t_df sqrt(var) (df = inf: the normal quantile)."""
    half = _t_quantile(confidence, df) * math.sqrt(max(var, 0.0))
    return estimate - half, estimate + half


def _round_paired_ci(d: np.ndarray, confidence, n_resamples, seed) -> SpeedupCI:
    """One replicate compared round by round: exp(median(d)) with the normal interval of the round
    bootstrap's variance (what replicated_speedup_ci takes as its within part)."""
    est = float(np.median(d))
    var = median_var(d, n_resamples, np.random.default_rng(seed))
    ratio = math.exp(est)
    if var <= 0:
        return SpeedupCI(ratio, ratio, ratio, "exact", 1, 0.0, math.inf, True)
    lo, hi = t_interval(est, var, math.inf, confidence)
    return SpeedupCI(ratio, math.exp(lo), math.exp(hi), "rounds", 1, math.sqrt(var), math.inf, True)


def _replicate_log_ratios(a, b, keys, n_resamples, rng):
    """(each replicate's log speedup of A over B, its sampling variance, whether paired by round):
    the median of its round_log_ratios with their bootstrap variance over rounds where the rows
    share a round robin (round_pairs), else its log ratio of medians with the two medians'
    bootstrap variances."""
    rounds = round_pairs(a, b, keys)
    if rounds is not None:
        return (np.array([float(np.median(d)) for d in rounds]),
                np.array([median_var(d, n_resamples, rng) for d in rounds]), True)
    per_rep = np.array([np.log(np.median(b[k]) / np.median(a[k])) for k in keys])
    within = np.array([log_median_var(a[k], n_resamples, rng) + log_median_var(b[k], n_resamples, rng)
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


def replicated_median_ci(x: Samples, confidence: float = 0.95, n_resamples: int = 2000,
                         seed: int = 0) -> Tuple[float, float]:
    """CI of replicated_median: median_ci's order statistics for one replicate; over R >= 2, the
    random-effects t interval of the mean log median (random_effects), exponentiated."""
    reps = by_replicate(x)
    if len(reps) == 1:
        return median_ci(next(iter(reps.values())), confidence)
    rng = np.random.default_rng(seed)
    logs = [math.log(float(np.median(v))) for v in reps.values()]
    var, df = random_effects(logs, [log_median_var(v, n_resamples, rng) for v in reps.values()])
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
        per_rep, within, by_round = _replicate_log_ratios(keep_rounds(a, a_reps), keep_rounds(b, b_reps),
                                                          keys, n_resamples, rng)
        var, df = random_effects(per_rep, within)
        log_ratio, replicates = float(np.mean(per_rep)), len(keys)
    else:
        sides = []
        for reps in (a, b):
            per_rep = np.array([np.log(np.median(x)) for x in reps.values()])
            within = np.array([log_median_var(x, n_resamples, rng) for x in reps.values()])
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
        d = round_pairs(a_us, b_us, list(a_reps))
        if d is not None:
            return _round_paired_ci(d[0], confidence, n_resamples, seed)
    if paired and len(set(a_reps) & set(b_reps)) >= 2:
        return replicated_speedup_ci(a_us, b_us, confidence, n_resamples, seed, paired=True)
    if not paired and max(len(a_reps), len(b_reps)) >= 2:
        return replicated_speedup_ci(a_reps, b_reps, confidence, n_resamples, seed, paired=False)
    return one_replicate_ci(pooled(a_reps), pooled(b_reps), confidence, n_resamples, seed)


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
    within = float(np.mean([log_median_var(x, n_resamples, rng) for x in r.values()]))
    s2 = float(np.var([np.log(np.median(x)) for x in r.values()], ddof=1))
    return VarianceSplit(len(r), max(0.0, s2 - within), within)


@dataclass(frozen=True)
class GpuSplit:
    """How the replicates' log medians of one row split between GPUs (``gpu_split``): ``between_gpus``,
    the variance of the GPUs' means beyond what the spread within a GPU explains; ``between_processes``,
    the variance between replicates on one GPU (their sampling included). Log scale, as VarianceSplit."""

    gpus: int
    replicates: int
    between_gpus: float
    between_processes: float


def gpu_split(reps: Mapping[int, Sequence[float]], gpu_of: Mapping[int, str]) -> GpuSplit:
    """One-way ANOVA of the replicates' log medians grouped by the GPU each ran on (`gpu_of`: replicate
    -> GPU), method of moments for unequal groups: MS_within estimates the variance between processes on
    one GPU, (MS_between - MS_within) / n0 the GPUs' own, clipped at 0, with n0 = (R - sum n_g^2 / R) /
    (G - 1). Needs two GPUs or more and two replicates or more on each (issue 49's rule)."""
    r = by_replicate(reps, "reps")
    groups: dict[str, list[float]] = {}
    for k, x in r.items():
        groups.setdefault(str(gpu_of[k]), []).append(float(np.log(np.median(x))))
    sizes = [len(v) for v in groups.values()]
    if len(groups) < 2 or min(sizes) < 2:
        raise ValueError(f"gpu_split needs two GPUs or more with two replicates or more each: got {sizes}")
    R, G = sum(sizes), len(groups)
    grand = np.mean([m for v in groups.values() for m in v])
    ms_between = sum(len(v) * (np.mean(v) - grand) ** 2 for v in groups.values()) / (G - 1)
    ms_within = sum(((np.asarray(v) - np.mean(v)) ** 2).sum() for v in groups.values()) / (R - G)
    n0 = (R - sum(n * n for n in sizes) / R) / (G - 1)
    return GpuSplit(G, R, max(0.0, float((ms_between - ms_within) / n0)), float(ms_within))


def leave_one_out(a_reps: Mapping[int, Sequence[float]], b_reps: Mapping[int, Sequence[float]],
                  confidence: float = 0.95, **ci_options) -> list:
    """Calibration of the replicated interval on one (A, B) pair of R >= 3 paired replicates;
    ``ci_options``: replicated_speedup_ci's other options (n_resamples, seed), alike for every interval.

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
    a = keep_rounds(by_replicate(a_reps, "a_reps"), a_reps)
    b = keep_rounds(by_replicate(b_reps, "b_reps"), b_reps)
    keys = sorted(set(a) & set(b))
    if len(keys) < 3:
        raise ValueError("leave_one_out needs at least three replicates in common")
    rounds = round_pairs(a, b, keys)  # decided once, on every replicate: one estimator for points and intervals
    if rounds is None:
        a, b = dict(a), dict(b)
        points = [float(np.median(b[k]) / np.median(a[k])) for k in keys]
    else:
        points = [math.exp(float(np.median(d))) for d in rounds]
    out = []
    for k, point in zip(keys, points):
        rest = [j for j in keys if j != k]
        ci = replicated_speedup_ci(subset_replicates(a, rest), subset_replicates(b, rest), confidence, **ci_options)
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
