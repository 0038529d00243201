"""A run as plain text, for the terminal (`python -m lab run`) and the timing notebook."""

from __future__ import annotations

from lab.measure import records


def summary_table(rec: records.RunRecord, mode: str = "hot", peer: str = "sdpa_flash") -> str:
    """Per shape: each impl's median, TFLOP/s, and speedup over `peer` with its 95% interval."""
    from lab.measure import stats

    from lab.kernels.shape import Shape

    from lab.studies import derived

    summ = derived.summary(rec)
    samples = rec.read_samples()
    samples = samples[~records.dropped(samples)]
    by_replicate = records.latencies_by_replicate

    lines = []
    keys = records.SHAPE_COLUMNS
    for shape_key, block in summ[summ["mode"] == mode].groupby(keys, sort=False):
        lines.append(f"\n{Shape.from_row(dict(zip(keys, shape_key)))} [{mode}]")
        lines.append(f"  {'impl':<24} {'median us':>10} {'p10-p90 us':>18} {'TFLOP/s':>8} {'vs ' + peer:>28}")
        sel = samples[(samples["mode"] == mode)]
        for col, val in zip(keys, shape_key):
            sel = sel[sel[col] == val]
        interleave = (rec.run_id, shape_key, mode)  # one round robin: its rows are compared round by round
        base = by_replicate(sel[sel["impl"] == peer], interleave)
        for _, row in block.iterrows():
            rel = ""
            if base and row["impl"] != peer:
                ci = stats.speedup_ci(by_replicate(sel[sel["impl"] == row["impl"]], interleave), base)
                rel = f"{ci.ratio:6.3f}x [{ci.lo:.3f}, {ci.hi:.3f}]"
            lines.append(f"  {row['impl']:<24} {row['median_us']:>10.2f} {row['p10_us']:>8.2f}-{row['p90_us']:<9.2f}"
                         f" {row['tflops']:>8.1f} {rel:>28}")
    return "\n".join(lines)
