"""The forms a row's latencies come in: one array, {replicate: latencies}, or RoundRobinSamples (each
sample's round kept), and the round-by-round pairing of two rows timed in one round robin."""

from __future__ import annotations

from typing import Mapping, Optional, Sequence, Union

import numpy as np


def as_1d(x, name: str = "samples") -> np.ndarray:
    """Validate and convert to a 1-D float64 array of finite values."""
    arr = np.asarray(x, dtype=np.float64).ravel()
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values")
    return arr


def as_positive_1d(x, name: str = "samples") -> np.ndarray:
    arr = as_1d(x, name)
    # Ratios and logs of latencies are meaningless for non-positive values.
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be strictly positive latencies")
    return arr


Samples = Union[Sequence[float], np.ndarray, Mapping[int, Sequence[float]]]


def by_replicate(x: Samples, name: str = "samples") -> dict:
    """``{replicate: latencies}`` (replicates in ascending order, empty ones left out) from a
    mapping, or ``{0: latencies}`` from one array: the one replicate of an older run."""
    if isinstance(x, Mapping):
        reps = {int(k): as_positive_1d(v, name) for k, v in sorted(x.items()) if np.size(v)}
        if not reps:
            raise ValueError(f"{name} must be non-empty")
        return reps
    return {0: as_positive_1d(x, name)}


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
    a, b = as_positive_1d(a, "a"), as_positive_1d(b, "b")
    ra, rb = np.asarray(a_rounds), np.asarray(b_rounds)
    if ra.shape != a.shape or rb.shape != b.shape:
        raise ValueError("round_log_ratios needs one round per sample on each side")
    ka, ma = _medians_by_round(a, ra)
    kb, mb = _medians_by_round(b, rb)
    common, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    return np.log(mb[ib] / ma[ia])


def round_pairs(a, b, keys) -> Optional[list]:
    """round_log_ratios for each replicate of `keys`, when a and b are RoundRobinSamples of one
    interleave with at least MIN_ROUNDS rounds in common in every one of them; else None (the
    ratio of medians applies)."""
    if not (isinstance(a, RoundRobinSamples) and isinstance(b, RoundRobinSamples)) or a.interleave != b.interleave:
        return None
    out = [round_log_ratios(a[k], a.rounds[k], b[k], b.rounds[k]) for k in keys]
    return out if all(d.size >= MIN_ROUNDS for d in out) else None


def keep_rounds(reps: dict, original):
    """by_replicate's plain mapping `reps` as RoundRobinSamples again where `original` was one."""
    if not isinstance(original, RoundRobinSamples):
        return reps
    return RoundRobinSamples(reps, {k: original.rounds[k] for k in reps}, original.interleave)


def subset_replicates(reps: dict, keys) -> dict:
    """The replicates `keys` of reps, rounds kept where it has them."""
    return keep_rounds({k: reps[k] for k in keys}, reps)
