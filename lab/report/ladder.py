"""The ladder at one shape: the hero figure (TFLOP/s of every step, branch by branch, a line per
peer), the compact ladder table and the sentence that states the finding. The first screen
(sections/first_screen.py) lays them out; notebook 05 shows them inline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lab.kernels.shape import Shape
from lab.measure import stats
from lab.report import branches
from lab.report.branches import branch, label
from lab.report.formats import MISSING, fmt, fmt_ci, fmt_us, md_table, shape_label, save_figure
from lab.report.figures import BRANCH_COLORS, new_figure, set_style, peer_colors
from lab.report.load import RunData, manifest_variant


def measured_steps(data: RunData, shape: Shape, mode: str = "hot") -> list[str]:
    """The manifest steps measured at shape, grouped by branch, each branch in manifest order."""
    return [v for v in data.variants if data.kind(v) == "variant" and data.lat(v, shape, mode) is not None]


def tflops_ci(data: RunData, impl: str, shape: Shape, mode: str = "hot"):
    """(TFLOP/s at the median, at the median CI's upper latency, at its lower latency)."""
    med = data.median(impl, shape, mode)
    if med is None:
        return None
    lo_us, hi_us = data.median_ci(impl, shape, mode)
    f = lambda us: stats.tflops(shape.B, shape.H, shape.S, shape.D, shape.causal, us)  # noqa: E731
    return f(med), f(hi_us), f(lo_us)


DENSE_STEPS = 30  # more bars than this in the hero figure: value and step labels turned upright
PEER_DASHES = ("--", (0, (6, 2, 1, 2)), ":", (0, (3, 1, 1, 1, 1, 1)), (0, (8, 3)), "-.")


def _spread(levels: dict, gap: float) -> dict:
    """Label heights for `levels` ({name: y}), moved apart upwards so that neighbours are at least `gap`
    apart, in the order of their levels."""
    out, last = {}, None
    for name, y in sorted(levels.items(), key=lambda kv: kv[1]):
        y = y if last is None else max(y, last + gap)
        out[name], last = y, y
    return out


def figure_hero(data: RunData, shape: Shape, path: Path, mode: str = "hot") -> str | None:
    """TFLOP/s of every step at shape (bars grouped by branch, each branch in manifest order, 95 % CI
    of the median) and a line per peer."""
    steps = measured_steps(data, shape, mode)
    if not steps:
        return f"no step measured at {shape_label(shape)} ({mode}): hero figure skipped"
    peers = [p for p in data.peers(shape) if data.lat(p, shape, mode) is not None]
    with set_style():
        fig = new_figure((12.7, 5.6))
        ax = fig.subplots()
        xs, x, prev = [], 0.0, None
        for v in steps:
            if prev is not None and branch(v) != prev:
                x += 0.8  # a gap between branches
            xs.append(x)
            prev, x = branch(v), x + 1
        vals = [tflops_ci(data, v, shape, mode) for v in steps]
        mid = np.array([t[0] for t in vals])
        err = np.array([[t[0] - t[1] for t in vals], [t[2] - t[0] for t in vals]])
        colors = [BRANCH_COLORS.get(branch(v), "#8C8C8C") for v in steps]
        ax.bar(xs, mid, color=colors, width=0.75, yerr=err, capsize=2, ecolor="black", error_kw={"lw": 0.8})
        dense = len(steps) > DENSE_STEPS  # labels upright would run into each other: turned to read bottom to top
        for xi, m, e in zip(xs, mid, err[1]):
            ax.annotate(f"{m:.0f}", (xi, m + e), textcoords="offset points", xytext=(0, 2), ha="center",
                        va="bottom", fontsize=6.5 if dense else 7, rotation=90 if dense else 0)
        pc = peer_colors(peers)
        levels = {p: tflops_ci(data, p, shape, mode)[0] for p in peers}
        for k, p in enumerate(peers):
            # each peer its own dash pattern, so two peers at one level (sdpa_default is often cudnn) both show
            ax.axhline(levels[p], color=pc[p], lw=1.6, ls=PEER_DASHES[k % len(PEER_DASHES)],
                       label=f"{p}: {levels[p]:.0f} TFLOP/s")
        top = max([*mid, *levels.values()]) if len(mid) else 1.0
        for p, y in _spread(levels, gap=0.035 * top).items():  # the peers' names at the right edge, never on top of each other
            ax.annotate(p, (1.0, y), xycoords=("axes fraction", "data"), xytext=(4, 0), textcoords="offset points",
                        va="center", fontsize=7, color=pc[p], annotation_clip=False)
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{manifest_variant(v).index} {v}" if manifest_variant(v) else v for v in steps],
                           rotation=90 if dense else 40, ha="center" if dense else "right",
                           rotation_mode="default" if dense else "anchor", fontsize=7 if dense else None)
        ax.set_ylabel(f"TFLOP/s ({mode} median, 95 % CI)")
        ax.set_title(f"Every step of the ladder at {shape_label(shape)}, fp16, {mode}, branch by branch; "
                     "dashed: peers in this run")
        from matplotlib.patches import Patch

        handles, labels = ax.get_legend_handles_labels()
        arches = list(dict.fromkeys(branch(v) for v in steps))  # not `branches`: that is the module
        handles = [Patch(color=BRANCH_COLORS.get(b, "#8C8C8C")) for b in arches] + handles
        labels = [("portable steps (sm_80+)" if b == "portable" else f"{b} steps") for b in arches] + labels
        ax.set_xlim(min(xs) - 0.7, max(xs) + 0.7)
        ax.set_ylim(top=ax.get_ylim()[1] * (1.08 if dense else 1.0))  # room for the turned labels
        fig.canvas.draw()  # the tick labels' extent, so that the legend sits below the longest of them
        lowest = min(t.get_window_extent().y0 for t in ax.get_xticklabels())
        below = ax.transAxes.inverted().transform((0, lowest))[1] - 0.02
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, below), ncol=3, frameon=False)
        save_figure(fig, path)
    return None


def ladder_rows(data: RunData, abl: pd.DataFrame, shape: Shape, mode: str = "hot") -> tuple[list[str], list[list]]:
    """The compact ladder table: step, its parent, µs, TFLOP/s, vs parent and vs the fastest peer
    (95 % CIs), verdict; rows in branch order, so a step's parent need not be the row above."""
    rows, fast = [], data.fastest_peer(shape, mode)
    for r in abl.itertuples():
        parent = label(r.parent) if r.parent else MISSING
        if r.status != "measured":
            rows.append([label(r.variant), parent] + [MISSING] * 4 + [r.status])
            continue
        c = data.speedup(r.variant, fast, shape, mode) if fast else None
        rows.append([label(r.variant), parent, fmt_us(r.median_us), fmt(r.tflops, 1),
                     fmt_ci(r.vs_parent, r.vs_parent_lo, r.vs_parent_hi) if r.parent else "(first step)",
                     fmt_ci(c.ratio, c.lo, c.hi) if c else MISSING,
                     r.speed_verdict or ("reference" if not r.parent else MISSING)])
    return ["step", "parent", "µs", "TFLOP/s", "vs parent [95% CI]",
            f"vs {fast or 'fastest peer'} (fastest peer) [95% CI]", "verdict vs parent"], rows


def ladder_table(data: RunData, abl: pd.DataFrame, shape: Shape, mode: str = "hot") -> str:
    headers, rows = ladder_rows(data, abl, shape, mode)
    return md_table(headers, rows, "llrrrrl")


def _reach(data: RunData, step: str, shape: Shape, mode: str, fast: str | None) -> tuple[str, str | None]:
    """('reaches 436 TFLOP/s (630.45 µs)', its speed relative to the fastest peer as a CI, or None)."""
    s = f"reaches {tflops_ci(data, step, shape, mode)[0]:.0f} TFLOP/s ({fmt_us(data.median(step, shape, mode))} µs)"
    c = data.speedup(step, fast, shape, mode) if fast else None
    return s, (fmt_ci(c.ratio, c.lo, c.hi) if c is not None else None)


def finding(data: RunData, shape: Shape, mode: str = "hot") -> str | None:
    """One sentence stating the finding for the judged step (branches.best_step: the arch-specific
    branch's end, else the fastest portable step) and, where it is another step, the fastest portable
    step beside it; every number computed from the run."""
    steps = measured_steps(data, shape, mode)
    best = branches.best_step(data)
    if best not in steps:
        best = steps[-1] if steps else ""  # the best step was not timed at this shape
    if not best:
        return None
    portable = branches.best_portable(data, shape, mode)
    root = branches.first_timed_ancestor(data, best, shape, mode)
    fast = data.fastest_peer(shape, mode)
    reach, vs_fast = _reach(data, best, shape, mode, fast)
    s = f"At {shape_label(shape)} ({mode}), {best} ({branches.role(data, best)}) {reach}"
    tot = data.speedup(best, root, shape, mode)
    if tot is not None and root != best:
        s += f", {fmt_ci(tot.ratio, tot.lo, tot.hi)} over the first step ({root})"
    if vs_fast is not None:
        s += (f", and runs at {vs_fast} the speed of the fastest peer measured, {fast} "
              f"({tflops_ci(data, fast, shape, mode)[0]:.0f} TFLOP/s)")
    if portable and portable != best and portable in steps:
        reach, vs_fast = _reach(data, portable, shape, mode, fast)
        s += f"; the fastest portable step, {portable}, {reach}" + (f", {vs_fast} the speed of {fast}" if vs_fast else "")
    return s + "."
