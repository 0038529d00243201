"""The regression gate: one run against an earlier one on the same GPU (`python -m lab compare`,
`make compare`)."""

from __future__ import annotations

import math

from lab.kernels.shape import Shape
from lab.measure import records
from lab.studies.measure_shape import AA_SUFFIX

REGRESSION_MARK = "! "  # the first column of a row that counts as a regression


def row_medians(rec):
    """Each (impl, shape, mode) row's median over its replicates (lab.measure.stats.replicated_median
    of its unthrottled samples: the summary's median_us, without the summary's intervals)."""
    import pandas as pd

    from lab.measure import stats

    keys = ["impl", *records.SHAPE_COLUMNS, "mode"]
    s = rec.read_samples()
    s = s[~records.dropped(s)]
    medians = {key: stats.replicated_median(records.latencies_by_replicate(g)) for key, g in s.groupby(keys)}
    return pd.Series(medians, dtype=float).rename_axis(keys)


def best_base(run_id: str) -> str | None:
    """The earlier complete run on the same GPU model with the lowest geometric-mean median over
    the rows it shares with `run_id` (the bar a new run has to clear)."""
    import numpy as np

    rec = records.RunRecord.open(run_id)
    gpu = rec.read_json("env.json").get("gpu")
    cur = row_medians(rec)
    best, best_score = None, math.inf
    for other in records.list_runs():
        if other >= run_id:
            continue
        o = records.RunRecord.open(other)
        if o.status.get("state") != "complete" or not o.has("samples.parquet") or o.read_json("env.json").get("gpu") != gpu:
            continue
        prev = row_medians(o)
        common = cur.index.intersection(prev.index)
        if len(common) == 0:
            continue
        score = float(np.exp(np.log(prev.loc[common]).mean() - np.log(cur.loc[common]).mean()))
        if score < best_score:
            best, best_score = other, score
    return best


def compare(run_id: str, base_id: str | None = None, threshold: float = 0.02, progress=print) -> int:
    """Speedups of RUN over BASE per (impl, shape, mode), with intervals (over each run's replicates,
    unpaired, where they have several); returns the exit code: 1 when a variant failed correctness
    in RUN or is significantly slower by more than threshold."""
    from lab.measure import check
    from lab.measure import peers as peer_mod
    from lab.measure import stats

    rec = records.RunRecord.open(run_id)
    failures = [c for c in (rec.read_json("correctness.json") if rec.has("correctness.json") else [])
                if check.failed(c)]  # a case a step does not take is no failure
    base_id = base_id or best_base(run_id)
    if base_id is None:
        progress(f"no earlier complete run on the same GPU to compare {run_id} with")
        return 1 if failures else 0
    base = records.RunRecord.open(base_id)
    progress(f"comparing {run_id} against {base_id} (ratio > 1: {run_id} faster)")
    a, b = rec.read_samples(), base.read_samples()
    a, b = a[~records.dropped(a)], b[~records.dropped(b)]
    keys = ["impl", *records.SHAPE_COLUMNS, "mode"]
    by_replicate = records.latencies_by_replicate
    pairs, labels = [], []
    for key, grp in a.groupby(keys):
        other = b
        for col, val in zip(keys, key):
            other = other[other[col] == val]
        if len(other):
            pairs.append((by_replicate(grp), by_replicate(other)))
            labels.append(key)
    # two runs: their replicates are separate processes, not pairs (each run's own spread counts)
    rows = stats.compare_rows(pairs, paired=False)
    regressions = []
    for key, cmp in zip(labels, rows):
        verdict = cmp.verdict()
        row = dict(zip(keys, key))
        shape = Shape.from_row(row)
        extra = "".join(f",{w}" for w in shape.spec.split(",")[5 if shape.causal else 4:])  # kvN, bf16 where they apply
        is_variant = not peer_mod.is_peer(key[0]) and not key[0].endswith(AA_SUFFIX)
        regression = is_variant and verdict == "slower" and cmp.speedup.ratio < 1 - threshold
        if regression:
            regressions.append(key)
        progress(f"{REGRESSION_MARK if regression else '  '}{key[0]:<24} ({shape.B},{shape.H},{shape.S},{shape.D}{extra}) "
                 f"{'causal' if shape.causal else 'full':<6} {row['mode']:<4}"
                 f" {cmp.speedup.ratio:6.3f}x [{cmp.speedup.lo:.3f}, {cmp.speedup.hi:.3f}] {verdict}")
    for f in failures:
        progress(f"  correctness FAILED: {f['variant']} {f['case']}")
    if regressions:
        progress(f"{len(regressions)} significant regressions beyond {threshold:.1%} (the rows marked "
                 f"{REGRESSION_MARK.strip()!r}): " + "; ".join(f"{k[0]} at {Shape.from_row(dict(zip(keys, k)))} {k[-1]}"
                                                         for k in regressions))
    else:
        progress(f"no variant regressed beyond {threshold:.1%}")
    return 1 if failures or regressions else 0
