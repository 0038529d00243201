"""The report's figures (matplotlib, written byte-identically twice): latency distributions,
speedups, the roofline, TFLOP/s against S, warp stalls; and the colours they share."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lab.kernels.shape import Shape
from lab.measure import stats
from lab.report import branches
from lab.report.formats import DPI, PEER, isnum, fmt_ratio, save_figure, shape_label
from lab.report.load import RunData, number_or_none, manifest_variant
from lab.report.findings import stall_columns
from lab.studies.measure_shape import AA_SUFFIX


def new_figure(figsize):
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, dpi=DPI)


def set_style():
    import matplotlib
    import seaborn as sns

    rc = dict(sns.axes_style("whitegrid"))
    rc.update({"font.family": "DejaVu Sans", "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9,
               "legend.fontsize": 8, "xtick.labelsize": 8, "ytick.labelsize": 8, "svg.hashsalt": "lab",
               "path.simplify": True})
    return matplotlib.rc_context(rc)


BRANCH_COLORS = {"portable": "#4C72B0", "sm_90a": "#55A868"}  # the ladder's arch branches; others grey
STEP_COLORS = ["#4C72B0", "#55A868", "#1F3B73", "#2F6B3A"]
PEER_COLORS = ["#C44E52", "#DD8452", "#8172B3", "#937860", "#DA8BC3", "#CCB974", "#64B5CD", "#000000"]


def peer_colors(peers: list[str]) -> dict:
    """A distinct colour per peer, none of them the branches' blue and green."""
    return {p: PEER_COLORS[i % len(PEER_COLORS)] for i, p in enumerate(peers)}


def step_colors(steps: list[str]) -> dict:
    """A step's colour from its arch branch; two steps of one branch get a darker second shade."""
    out, used = {}, set()
    for v in steps:
        var = manifest_variant(v)
        c = BRANCH_COLORS.get(var.arch if var else "", "#8C8C8C")
        out[v] = c if c not in used else next((x for x in STEP_COLORS if x not in used), c)
        used.add(out[v])
    return out


def impl_colors(data: RunData, impls: list[str]) -> dict:
    """Every impl its own colour: steps in shades of their branch's hue (blues: portable, greens: sm_90a,
    purples otherwise), an A/A twin its step's colour, peers the distinct peer colours."""
    from matplotlib import colormaps

    steps = [i for i in impls if data.kind(i) == "variant"]
    by_branch: dict = {}
    for v in steps:
        var = manifest_variant(v)
        by_branch.setdefault(var.arch if var else "", []).append(v)
    maps = {"portable": "Blues", "sm_90a": "Greens"}
    out = {}
    for arch, vs in by_branch.items():
        cmap = colormaps[maps.get(arch, "Purples")]
        for k, v in enumerate(vs):
            out[v] = cmap(0.35 + 0.6 * k / max(len(vs) - 1, 1))
    out.update(peer_colors([i for i in impls if data.kind(i) in ("sdpa", "peer")]))
    for i in impls:
        out.setdefault(i, out.get(i.removesuffix(AA_SUFFIX), "#8C8C8C"))
    return out


def highlighted(data: RunData) -> list[str]:
    """What the summary figures show in colour: the last timed step of each branch, then the peers."""
    return branches.ends(data) + data.peers()


def figure_latency(data: RunData, shape: Shape, path: Path, mode="hot") -> str | None:
    """The latency ECDFs at `shape` of the summary figures' implementations (highlighted: each branch's end and the
    peers) and the A/A twins: fifty steps' curves, each a legend line, would hide what the figure is for."""
    timed = [i for i in data.impls(shape) if data.lat(i, shape, mode) is not None]
    shown = set(highlighted(data))
    impls = [i for i in timed if i in shown or i.removesuffix(AA_SUFFIX) in shown] or timed
    if not impls:
        return f"no {mode} samples at {shape_label(shape)}: latency figure skipped"
    with set_style():
        fig = new_figure((11.0, 4.6))
        ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.25, 1]})
        pal = impl_colors(data, impls)
        for impl in impls:
            x = np.sort(data.lat(impl, shape, mode))
            y = np.arange(1, len(x) + 1) / len(x)
            style = dict(where="post", color=pal[impl], lw=1.5, ls="--" if impl.endswith(AA_SUFFIX) else "-")
            ax.step(x, y, label=f"{impl} (n={len(x)}, median {np.median(x):.1f} µs)", **style)
            ax2.step((x / np.median(x) - 1) * 100, y, **style)
        ax.set_xscale("log")
        ax.set_xlabel(f"latency per launch, µs (log scale; {mode})")
        ax.set_ylabel("fraction of samples ≤ x")
        ax.set_title("ECDF of latency")
        ax2.set_xlabel("deviation from the implementation's own median, %")
        ax2.axvline(0, color="black", lw=0.8)
        ax2.set_title("ECDF of latency / median (spread)")
        ax2.set_yticklabels([])
        fig.legend(*ax.get_legend_handles_labels(), loc="center left", bbox_to_anchor=(0.705, 0.5), frameon=False,
                   fontsize=7.5)
        fig.suptitle(f"Latency distributions at {shape_label(shape)} ({mode}, throttled samples dropped)",
                     fontsize=10)
        fig.subplots_adjust(left=0.06, right=0.70, bottom=0.12, top=0.86, wspace=0.06)
        save_figure(fig, path)
    return None


def figure_speedup(abl: pd.DataFrame, path: Path) -> str | None:
    if abl.empty or not abl["vs_sdpa_flash"].notna().any() and not abl["vs_parent"].notna().any():
        return "no speedups to plot"
    with set_style():
        height = max(5.6, 0.2 * len(abl) + 1.4)  # a row a step, 0.2 in apart: 51 steps would overlap in 5.6
        fig = new_figure((12.7, height))
        axes = fig.subplots(1, 2)
        panels = (("vs_parent", "speedup over parent step", "tab:blue"),
                  ("vs_sdpa_flash", f"speedup over {PEER}", "tab:orange"))
        labels = [f"{int(s)}. {t}" if isnum(s) else t for s, t in zip(abl["step"], abl["variant"])]
        for ax, (col, title, color) in zip(axes, panels):
            y = np.arange(len(abl))[::-1]
            vals = abl[col].to_numpy(dtype=float)
            lo = abl[col + "_lo"].to_numpy(dtype=float)
            hi = abl[col + "_hi"].to_numpy(dtype=float)
            ok = np.isfinite(vals)
            ax.errorbar(vals[ok], y[ok], xerr=[vals[ok] - lo[ok], hi[ok] - vals[ok]], fmt="o", color=color,
                        ecolor="black", elinewidth=1.2, capsize=4, ms=6)
            for yi, v, h in zip(y[ok], vals[ok], hi[ok]):
                ax.annotate(f"{fmt_ratio(v)}×", (h, yi), textcoords="offset points", xytext=(6, 0), ha="left",
                            va="center", fontsize=7)
            for yi in y[~ok]:
                ax.annotate("n/a", (1.0, yi), ha="center", va="center", fontsize=7, color="grey")
            ax.axvline(1.0, color="black", lw=1, ls="--")
            ax.set_xscale("log")
            ax.set_yticks(y)
            ax.set_yticklabels(labels if ax is axes[0] else [""] * len(labels))
            ax.set_ylim(-0.7, len(abl) - 0.3)
            finite = np.concatenate([lo[ok], hi[ok], [1.0]])
            ax.set_xlim(finite.min() / 1.6, finite.max() * 3.0)
            ax.set_title(title)
            ax.set_xlabel("speedup (log scale)")
        shape = abl.attrs.get("shape") or ""
        fig.suptitle(f"Ablation at {shape}, {abl.attrs.get('mode', 'hot')}: speedup with its 95 % interval "
                     "(> 1: faster)", fontsize=10)
        fig.subplots_adjust(left=0.15, right=0.98, bottom=0.67 / height, top=1 - 0.67 / height, wspace=0.1)
        save_figure(fig, path)
    return None


def figure_roofline(data: RunData, path: Path) -> str | None:
    if data.ceilings is None:
        return "no measured ceilings (ceilings.json): roofline skipped"
    if data.profile is None or not len(data.profile):
        return "no profile data: roofline skipped"
    p = data.general_profile().copy()  # not the launches profiled for one step's hypothesis
    p = p[pd.to_numeric(p.get("achieved_tflops"), errors="coerce").notna()
          & pd.to_numeric(p.get("arithmetic_intensity"), errors="coerce").notna()]
    if not len(p):
        return "profile.csv has no achieved_tflops/arithmetic_intensity values: roofline skipped"
    peak, bw = data.ceilings["tensor_tflops"], data.ceilings["dram_gbps"]
    ridge = peak * 1e12 / (bw * 1e9)
    ai = p["arithmetic_intensity"].astype(float)
    xs = np.geomspace(min(ai.min(), ridge) / 8, max(ai.max(), ridge) * 8, 200)
    impls = [i for i in data.impls() if i in set(p["impl"])] + sorted(set(p["impl"]) - set(data.impls()))
    pshapes = list(dict.fromkeys(Shape.from_row(r)
                                 for r in p.itertuples()))
    markers = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p", "d", "H"]
    with set_style():
        fig = new_figure((9.5, 5.6))
        ax = fig.subplots()
        ax.plot(xs, np.minimum(peak, xs * bw / 1e3), color="black", lw=1.5,
                label=f"roofline: {peak:.0f} TFLOP/s,\n{bw:.0f} GB/s, ridge {ridge:.0f} FLOP/B")
        ax.axvline(ridge, color="grey", lw=0.8, ls=":")
        shown = [i for i in highlighted(data) if i in impls]
        pal = {**step_colors([i for i in shown if data.kind(i) == "variant"]),
               **peer_colors([i for i in shown if data.kind(i) in ("sdpa", "peer")])}
        for impl in impls:
            lit = impl in shown
            for k, ps in enumerate(pshapes):
                sel = p[(p["impl"] == impl) & (p["S"] == ps.S) & (p["D"] == ps.D) & (p["B"] == ps.B)
                        & (p["H"] == ps.H)]
                if len(sel):
                    ax.scatter(sel["arithmetic_intensity"], sel["achieved_tflops"], color=pal.get(impl, "#B0B0B0"),
                               marker=markers[k % len(markers)], s=46 if lit else 22, alpha=1.0 if lit else 0.35,
                               edgecolor="black" if lit else "none", linewidth=0.4, zorder=4 if lit else 2)
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color="black", lw=1.5)]
        names = [ax.get_legend_handles_labels()[1][0]]
        handles += [Line2D([], [], marker="o", ls="", color=pal[i], markeredgecolor="black") for i in shown]
        names += shown
        handles.append(Line2D([], [], marker="o", ls="", color="#B0B0B0", alpha=0.5))
        names.append("earlier steps (faded)")
        handles += [Line2D([], [], marker=markers[k % len(markers)], ls="", color="grey") for k in range(len(pshapes))]
        names += [shape_label(s) for s in pshapes]
        ax.legend(handles, names, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity, FLOP per DRAM byte (ncu dram__bytes)")
        ax.set_ylabel("achieved TFLOP/s (ncu duration)")
        ax.set_title("Roofline with the ceilings measured on this GPU")
        save_figure(fig, path)
    return None


def sweep_groups(data: RunData) -> dict:
    """(D, causal) -> shapes, where at least three sequence lengths were measured: the `sweep`
    set's shapes (B * S = SWEEP_TOKENS, H = 16) where the run has them, else every shape."""
    from lab.studies.shapes import SWEEP_TOKENS

    def groups_of(shapes) -> dict:
        groups: dict = {}
        for s in shapes:
            groups.setdefault((s.D, s.causal), []).append(s)
        return {k: sorted(v, key=lambda s: (s.S, s.B, s.H)) for k, v in groups.items()
                if len({s.S for s in v}) >= 3}

    # fp16 multi-head only: the models shapes (bf16, grouped K/V heads) have their own section
    plain = [s for s in data.measured_shapes if s.plain]
    swept = groups_of([s for s in plain if s.B * s.S == SWEEP_TOKENS and s.H == 16])
    return swept or groups_of(plain)


def figure_sweep(data: RunData, path: Path, mode="hot") -> str | None:
    groups = sweep_groups(data)
    if not groups:
        seen = sorted({s.S for s in data.measured_shapes})
        return (f"no S sweep in this run (sequence lengths measured: {', '.join(map(str, seen)) or 'none'}; "
                f"a sweep needs at least three per (D, causal)): TFLOP/s-vs-S figure skipped; "
                "`make ablation SHAPES=sweep` measures one")
    keys = sorted(groups)
    impls = [i for i in highlighted(data) if not i.endswith(AA_SUFFIX)]
    pal = {**step_colors([i for i in impls if data.kind(i) == "variant"]),
           **peer_colors([i for i in impls if data.kind(i) in ("sdpa", "peer")])}
    with set_style():
        width = max(4.2 * len(keys), 8.0)
        fig = new_figure((width, 4.6))
        axes = np.atleast_1d(fig.subplots(1, len(keys), sharey=True))
        for ax, key in zip(axes, keys):
            for impl in impls:
                pts = [(s.S, stats.tflops(*s.dims, s.causal, data.median(impl, s, mode)))
                       for s in groups[key] if data.median(impl, s, mode)]
                if pts:
                    ax.plot(*zip(*pts), marker="o", ms=3, color=pal[impl], label=impl)
            ax.set_xscale("log", base=2)
            ax.set_title(f"D={key[0]}, {'causal' if key[1] else 'non-causal'}")
            ax.set_xlabel("sequence length S")
        axes[0].set_ylabel(f"TFLOP/s ({mode} median)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.02), ncol=min(len(labels), 6),
                   frameon=False)
        fig.suptitle("TFLOP/s against sequence length: the last step of each branch and the peers", fontsize=10)
        save_figure(fig, path)
    return None


def figure_stalls(data: RunData, pshape: Shape | None, path: Path) -> str | None:
    if pshape is None:
        return "no profile data: warp-stall figure skipped"
    rows = [(i, data.profile_row(i, pshape)) for i in data.impls() + sorted(set(data.profile["impl"]))]
    rows = [(i, r) for i, r in dict(rows).items() if r]
    if not rows:
        return f"no profiled kernel at {shape_label(pshape)}: warp-stall figure skipped"
    cols = stall_columns(data.profile)
    df = pd.DataFrame([{c: number_or_none(r.get(c)) or 0.0 for c in cols} for _, r in rows], index=[i for i, _ in rows])
    order = df.sum().sort_values(ascending=False, kind="stable")
    top = [c for c in order.index[:8] if order[c] > 0]
    rest = [c for c in cols if c not in top]
    plot = df[top].copy()
    if rest:
        plot["other"] = df[rest].sum(axis=1)
    import seaborn as sns

    colors = sns.color_palette("tab10", 10)
    height = max(4.6, 0.16 * len(plot) + 1.2)  # a bar a kernel, 0.16 in apart
    with set_style():
        fig = new_figure((9.0, height))
        ax = fig.subplots()
        y = np.arange(len(plot))[::-1]
        left = np.zeros(len(plot))
        for k, c in enumerate(plot.columns):
            vals = plot[c].to_numpy()
            ax.barh(y, vals, left=left, color=colors[k % 10], edgecolor="white", lw=0.4,
                    label=c.replace("stall_", ""))
            left += vals
        ax.set_yticks(y)
        ax.set_yticklabels(plot.index)
        ax.set_xlabel("warps stalled per issued instruction (ncu smsp__average_warps_issue_stalled_*)")
        ax.set_title(f"Warp-stall breakdown at {shape_label(pshape)}")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        ax.set_ylim(-0.6, len(plot) - 0.4)
        fig.subplots_adjust(left=0.25, right=0.78, bottom=0.55 / height, top=1 - 0.37 / height)
        save_figure(fig, path)
    return None
