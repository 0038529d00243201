"""Two rows compared: the speedup interval, effect size and corrected p-value bundled, and the verdict
(faster, slower, within noise) from the interval against the noise band."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Tuple

import numpy as np

from lab.measure.stats.samples import pooled
from lab.measure.stats.bootstrap import SpeedupCI
from lab.measure.stats.replicated import speedup_ci
from lab.measure.stats.ranks import benjamini_hochberg, cliffs_delta, hodges_lehmann_log_ratio, mann_whitney_p


# A change smaller than this (relative) is "within noise" whatever its p-value (Comparison.verdict).
NOISE_BAND = 0.01


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


def compare_rows(pairs: Iterable[Tuple[Sequence[float], Sequence[float]]], **options) -> list:
    """Compare many (a_us, b_us) pairs and BH-adjust their p-values jointly.

    ``options`` are compare's keywords (noise_band, alpha, seed, n_resamples, paired), the same for
    every row, so row *i* equals ``compare(a_i, b_i, **options)`` except for ``p_adjusted``, which is
    the Benjamini-Hochberg value across all rows (one ablation table = one family of hypotheses).
    """
    rows = [compare(a, b, **options) for a, b in pairs]
    if rows:
        adj = benjamini_hochberg([r.p_value for r in rows])
        for r, q in zip(rows, adj):
            r.p_adjusted = float(q)
    return rows
