"""Two steps (or any two implementations) of one run at one recorded shape, side by side, from the
run folder alone (no GPU): medians, the speedup with its 95 % interval (lab.measure.stats.speedup_ci), the sample
distributions and the profiler's metrics. `notebooks/06_explore.ipynb` is a thin front end.

    >>> from lab.report import explore
    >>> explore.compare("20261122T023222Z-793d6a3", "4,16,4096,64", "tma", "ftz_exp2")
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lab.kernels.shape import Shape
from lab.measure import records, stats
from lab.report.formats import FINDING_METRICS, shape_label
from lab.report.figures import new_figure, set_style, peer_colors
from lab.report.load import RunData, run_data


def open_run(run) -> RunData:
    """A run's data: a RunRecord, or a run id under data/runs (or a run folder's path)."""
    return run_data(run if isinstance(run, records.RunRecord) else records.RunRecord.open(run))


def _checked(data: RunData, shape: Shape, impls: tuple[str, ...], mode: str) -> None:
    if shape not in data.measured_shapes:
        raise ValueError(f"shape {shape_label(shape)} is not recorded in run {data.run_id}; recorded: "
                         + "; ".join(shape_label(s) for s in data.measured_shapes))
    for i in impls:
        if data.lat(i, shape, mode) is None:
            raise ValueError(f"{i!r} has no {mode} samples at {shape_label(shape)} in run {data.run_id}; "
                             f"measured there: {', '.join(data.impls(shape, studies=True))}")


def compare(run, shape, step_a: str, step_b: str, modes: tuple[str, ...] | None = None) -> pd.DataFrame:
    """One row per mode: both medians (µs, with n), TFLOP/s, and step_b's speedup over step_a
    (median(a) / median(b), > 1: b is faster) with its 95 % interval, Cliff's delta and p."""
    data = run if isinstance(run, RunData) else open_run(run)
    shape = Shape.of(shape)
    rows = []
    for mode in modes or data.modes:
        if data.lat(step_a, shape, mode) is None and data.lat(step_b, shape, mode) is None:
            continue
        _checked(data, shape, (step_a, step_b), mode)
        a, b = data.lat(step_a, shape, mode), data.lat(step_b, shape, mode)
        ma, mb = data.median(step_a, shape, mode), data.median(step_b, shape, mode)
        c = data.speedup(step_b, step_a, shape, mode)
        rows.append({"mode": mode, f"{step_a} µs": ma, f"{step_a} n": len(a),
                     f"{step_b} µs": mb, f"{step_b} n": len(b),
                     f"{step_a} TFLOP/s": stats.tflops(shape.B, shape.H, shape.S, shape.D, shape.causal, ma),
                     f"{step_b} TFLOP/s": stats.tflops(shape.B, shape.H, shape.S, shape.D, shape.causal, mb),
                     "speedup": c.ratio, "ci_lo": c.lo, "ci_hi": c.hi,
                     "cliffs_delta": stats.cliffs_delta(b, a), "p": stats.mann_whitney_p(b, a)})
    if not rows:
        _checked(data, shape, (step_a, step_b), (modes or data.modes or ["hot"])[0])
    return pd.DataFrame(rows)


def figure_distributions(run, shape, step_a: str, step_b: str, mode: str = "hot"):
    """Histogram and ECDF of both steps' samples (throttled ones dropped); returns the Figure."""
    data = run if isinstance(run, RunData) else open_run(run)
    shape = Shape.of(shape)
    _checked(data, shape, (step_a, step_b), mode)
    col = peer_colors([step_a, step_b])
    with set_style():
        fig = new_figure((11.0, 4.2))
        ax, ax2 = fig.subplots(1, 2)
        for impl in (step_a, step_b):
            x = np.sort(data.lat(impl, shape, mode))
            ax.hist(x, bins=60, alpha=0.55, color=col[impl], label=f"{impl} (median {np.median(x):.2f} µs)")
            ax2.step(x, np.arange(1, len(x) + 1) / len(x), where="post", color=col[impl], label=impl)
        ax.set_xlabel("latency µs")
        ax.set_ylabel("samples")
        ax2.set_xlabel("latency µs")
        ax2.set_ylabel("fraction of samples ≤ x")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), frameon=False)
        fig.suptitle(f"{step_a} vs {step_b} at {shape_label(shape)}, {mode}", fontsize=10)
    return fig


def profile_side_by_side(run, shape, step_a: str, step_b: str) -> pd.DataFrame:
    """The profiler metrics of both steps at the profiled shape standing for `shape` (empty if none)."""
    data = run if isinstance(run, RunData) else open_run(run)
    shape = Shape.of(shape)
    pshape = data.profile_shape_for(shape)
    ra, rb = data.profile_row(step_a, pshape), data.profile_row(step_b, pshape)
    if pshape is None or (ra is None and rb is None):
        return pd.DataFrame(columns=["metric", step_a, step_b])
    cols = [c for c, *_ in FINDING_METRICS] + ["duration_us", "achieved_tflops", "registers", "waves"]
    rows = [{"metric": c, step_a: (ra or {}).get(c), step_b: (rb or {}).get(c)} for c in dict.fromkeys(cols)
            if c in data.profile.columns]
    out = pd.DataFrame(rows)
    out.attrs["profiled_shape"] = shape_label(pshape)
    return out


def png(fig) -> bytes:
    """The figure as PNG bytes (for IPython.display.Image: our figures are not pyplot's)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()
