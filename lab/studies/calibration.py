"""Calibration of a run's intervals: leave one replicate out.

For every step-vs-parent ratio of a run of R >= 3 replicates (every ladder shape, mode and step
whose parent was measured there), each replicate is left out in turn: does the interval from the
others (lab.measure.stats.replicated_speedup_ci) cover the left-out replicate's own ratio, and
does the prediction interval for one replicate that the same model implies? The first is the
check a skeptic makes by running the study again; a calibrated interval passes it at the rate
`expected_covered` (lab.measure.stats.leave_one_out: about 91 % at R = 3 where replicates differ
more than their sampling explains, less where sampling dominates), the second at its confidence.
The report computes it from a run's samples when read (lab.studies.derived.calibration).

    calibration.leave_one_out_run(rec.read_samples(), RunParams.read(rec))  # -> the calibration's dict
    python -m lab.studies.calibration RUN_ID [--rows]  # printed
"""

from __future__ import annotations

import functools

from lab.cli import OneLineParser
from lab.kernels import manifest
from lab.kernels.shape import Shape
from lab.measure import parallel, stats
from lab.measure.records import dropped, replicates_by_row

MIN_REPLICATES = 3  # leave one out and keep two: the fewest that estimate a spread


def step_pairs(variants) -> list[tuple[str, str]]:
    """(step, parent) for each of `variants` whose parent is among them, in their order."""
    have = set(variants)
    out = []
    for name in variants:
        try:
            parent = manifest.get(name).parent
        except KeyError:
            continue
        if parent and parent in have:
            out.append((name, parent))
    return out


def leave_one_out_run(samples, params, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> dict:
    """The calibration from a run's samples (with `replicate`) and its RunParams: the fractions covered
    over every (step-vs-parent ratio, replicate left out) at every ladder shape in the burst modes (hot,
    cold), and one row per ratio and replicate. With fewer than MIN_REPLICATES replicates:
    {"applicable": False, "reason": ...}."""
    ladder = [s for s, scope in params.scopes.items() if scope == "ladder"]
    pairs = [(step, parent, shape, mode) for shape in ladder for mode in params.modes if mode != "sustained"
             for step, parent in step_pairs(list(params.variants))]
    return _leave_one_out(samples, pairs, "every step against its parent, at every ladder shape and mode where both "
                          "were measured", confidence, n_resamples, seed)


def leave_one_out_sustained(samples, params, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> dict:
    """The same over the sustained mode's ratios (issue 45): at each shape it measured, the headline
    branch's end against every other row there (its parent, the other branch's end and parent, the peers)."""
    from lab.kernels.manifest import headline_end

    sus = samples[samples["mode"] == "sustained"] if len(samples) else samples
    rows: dict = {}
    for (impl, *key), _ in sus.groupby(["impl", "B", "H", "S", "D", "causal", "H_kv", "dtype"]):
        rows.setdefault(Shape.from_row(dict(zip(["B", "H", "S", "D", "causal", "H_kv", "dtype"], key))), []).append(impl)
    end = headline_end([v for v in params.variants])
    pairs = [(end, other, shape, "sustained") for shape, impls in rows.items() if end in impls
             for other in impls if other != end]
    return _leave_one_out(samples, pairs, "the headline branch's end against every other row of the sustained mode, "
                          "at every shape it measured", confidence, n_resamples, seed)


def _leave_one_out(samples, pairs, what: str, confidence, n_resamples, seed) -> dict:
    kept = samples[~dropped(samples)]
    R = int(kept["replicate"].nunique()) if len(kept) else 0
    base = {"replicates": R, "confidence": confidence, "pairs": what}
    if R < MIN_REPLICATES:
        return {**base, "applicable": False,
                "reason": f"this run has {R} replicate{'' if R == 1 else 's'}; leaving one out needs at least {MIN_REPLICATES}"}
    lat = replicates_by_row(kept)  # with rounds where recorded: compared round by round
    measured, args = [], []  # each ratio's leave-one-out bootstraps are independent: spread over the cores
    for a_name, b_name, shape, mode in pairs:
        a, b = lat.get((a_name, shape, mode)), lat.get((b_name, shape, mode))
        if a is None or b is None or len(set(a) & set(b)) < MIN_REPLICATES:
            continue
        measured.append(dict(step=a_name, parent=b_name, shape=list(shape.astuple()), mode=mode))
        args.append((a, b))
    one_pair = functools.partial(stats.leave_one_out, confidence=confidence, n_resamples=n_resamples, seed=seed)
    rows = [dict(pair, **r) for pair, out in zip(measured, parallel.starmap(one_pair, args)) for r in out]
    if not rows:
        return {**base, "applicable": False, "reason": "no two rows measured in common replicates"}
    n = len(rows)
    return {**base, "applicable": True, "ratios": len({(r["step"], r["parent"], tuple(r["shape"]), r["mode"])
                                                       for r in rows}),
            "points": n, "covered": sum(r["covered"] for r in rows) / n,
            "expected_covered": sum(r["expected_covered"] for r in rows) / n,
            "pred_covered": sum(r["pred_covered"] for r in rows) / n,
            "by_round": sum(r["by_round"] for r in rows) / n, "rows": rows}


def main(argv=None) -> int:
    """Print a run's leave-one-replicate-out calibration (as the report computes it: lab.studies.derived
    .calibration): the summary, then one JSON line per (ratio, replicate left out) with --rows."""
    import json
    from pathlib import Path

    from lab.measure.records import RunRecord
    from lab.studies.params import RunParams

    ap = OneLineParser(prog="python -m lab.studies.calibration", description=main.__doc__)
    ap.add_argument("run_id")
    ap.add_argument("--runs-root", type=Path, default=None, help="where the runs are (default: data/runs)")
    ap.add_argument("--rows", action="store_true", help="also every point, one JSON object a line")
    args = ap.parse_args(argv)
    rec = RunRecord.open(args.run_id, args.runs_root)
    rec.require_current_layout()
    cal = json.loads(json.dumps(leave_one_out_run(rec.read_samples(), RunParams.read(rec)), default=str))
    print(json.dumps({k: v for k, v in cal.items() if k != "rows"}))
    for row in cal.get("rows", []) if args.rows else []:
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
