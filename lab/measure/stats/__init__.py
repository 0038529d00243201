"""Robust statistics for kernel-latency comparisons, a module for each concern (Criterion.rs's stats/):
samples (the forms latencies come in), descriptive, bootstrap, replicated, ranks, comparison, throughput.
`from lab.measure import stats; stats.speedup_ci(...)` reads the public API below from them.

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

from lab.measure.stats.samples import MIN_ROUNDS, RoundRobinSamples, Samples, by_replicate, pooled, round_log_ratios  # noqa: F401
from lab.measure.stats.descriptive import median_ci, relative_ci_halfwidth, summarize  # noqa: F401
from lab.measure.stats.bootstrap import SpeedupCI  # noqa: F401
from lab.measure.stats.replicated import (GpuSplit, VarianceSplit, gpu_split, leave_one_out,  # noqa: F401
                                          random_effects, replicated_median, replicated_median_ci,
                                          replicated_speedup_ci, speedup_ci, t_interval, variance_split)
from lab.measure.stats.ranks import benjamini_hochberg, cliffs_delta, hodges_lehmann_log_ratio, mann_whitney_p  # noqa: F401
from lab.measure.stats.comparison import NOISE_BAND, Comparison, compare, compare_rows, interval_verdict  # noqa: F401
from lab.measure.stats.throughput import attention_flops, effective_gbps, tflops  # noqa: F401

__all__ = [
    "summarize", "median_ci", "relative_ci_halfwidth", "SpeedupCI", "speedup_ci", "replicated_speedup_ci",
    "RoundRobinSamples", "round_log_ratios", "MIN_ROUNDS", "VarianceSplit", "variance_split", "GpuSplit",
    "gpu_split", "leave_one_out", "pooled", "by_replicate", "replicated_median", "replicated_median_ci", "random_effects", "t_interval",
    "cliffs_delta", "mann_whitney_p", "hodges_lehmann_log_ratio", "benjamini_hochberg", "NOISE_BAND",
    "interval_verdict", "Comparison", "compare", "compare_rows", "attention_flops", "tflops", "effective_gbps",
]
