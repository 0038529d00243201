"""The report's knock-out section, from a run folder alone.

Per optimization that the last step of a branch can switch off: its ladder gain (the step that
introduced it against its parent) beside its knock-out cost (the last step against the last step
without it), both as speedups of medians (>1: the optimization helps) with 95 % bootstrap
intervals (lab.measure.stats.speedup_ci), at the step's judged shape, the headline shape and the
canonical shape (and the D = 128 headline for a switch of the D = 128 kernel only). Then a figure
(one row per optimization, sorted by knock-out cost), the interaction table of the 2^4 factorial
(its effects computed from factorial.parquet: lab.studies.factorial.run_effects), the dependencies and structural ideas, and text naming the optimizations whose two
numbers disagree most with what the profile says.

    text = section(run_dir, figures_dir)    # Markdown; writes figures_dir/knockouts.png
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from lab.kernels import switches as sw
from lab.kernels import variants
from lab.kernels.shape import Shape
from lab.measure import records, stats
from lab.report.formats import fmt_ci, md_table, save_figure
from lab.studies.shapes import HEADLINE, HEADLINE_CANONICAL, HEADLINE_D128

FIGURE = "knockouts.png"
PROFILE_METRICS = ("duration_us", "tensor_pipe_active", "achieved_occupancy", "stall_long_scoreboard", "stall_wait")


def _dir(run) -> Path:
    return Path(getattr(run, "dir", run))


def _samples(run_dir: Path, mode: str = "hot") -> dict:
    """(impl, shape) -> {replicate: latencies} (throttled samples dropped, as the summary does), with
    rounds where the run recorded them (one round robin per run, shape and mode: compared round by round)."""
    df = records.with_replicate(pd.read_parquet(run_dir / "samples.parquet"))
    df = df[(df["mode"] == mode) & ~records.dropped(df)]
    return {(impl, shape): reps for (impl, shape, _), reps in records.replicates_by_row(df, run_dir.name).items()}


def _speedup(samples: dict, faster: str, slower: str, shape) -> stats.SpeedupCI | None:
    """Speedup of `faster` over `slower` (median(slower) / median(faster)) at shape, if both timed."""
    a, b = samples.get((faster, shape)), samples.get((slower, shape))
    if not a or not b:
        return None
    return stats.speedup_ci(a, b)


def run_kernel(declared: str, impls, switches: list) -> str:
    """The kernel whose knock-outs of `declared`'s switches a run measured: `declared` itself, or,
    for a run recorded before the switches moved to a new end of the branch (step 18's went to
    step 28 when the ladder grew), the kernel the run's knock-out impls name."""
    names = {s.name for s in switches if s.kernel == declared}
    found = {}
    for impl in impls:
        parsed = sw.parse_impl(impl)
        if parsed and parsed[1] in names:
            found[parsed[0]] = found.get(parsed[0], 0) + 1
    return declared if declared in found or not found else max(found, key=found.get)


def table(run) -> pd.DataFrame:
    """One row per (switch, shape): ladder gain and knock-out cost with intervals (NaN where
    the run lacks the measurement or the switch does not change that shape's kernel)."""
    run_dir = _dir(run)
    params = json.loads((run_dir / "params.json").read_text()) if (run_dir / "params.json").exists() else {}
    samples = _samples(run_dir)
    impls = {impl for impl, _ in samples}
    all_switches = sw.load()[0]
    by_name = {x.name: x for x in all_switches}
    run_variants = set(params.get("variants", variants.names()))
    kernel_of = {d: run_kernel(d, impls, all_switches) for d in {s.kernel for s in all_switches}}
    build_path = run_dir / "build.json"
    recorded_defines = {name: b.get("defines") for name, b in json.loads(build_path.read_text()).items()
                        if isinstance(b, dict)} if build_path.exists() else {}
    rows = []
    for s in all_switches:
        kernel = kernel_of[s.kernel]
        # the run's kernel must hold the idea: a switch declared later than it is not its knock-out
        if kernel not in run_variants or variants.get(s.introduced_by).index > variants.get(kernel).index:
            continue
        impl = sw.knockout_impl(kernel, s.name)
        step = variants.get(s.introduced_by)
        judged = variants.judged_shape(step) or HEADLINE
        roles = [("judged", judged)] if judged != HEADLINE else []  # judged at the headline: one row
        if not roles and s.applies(HEADLINE_D128.D, HEADLINE_D128.causal) and not s.applies(HEADLINE.D, HEADLINE.causal):
            # judged at the D = 64 headline, but the switch changes only the D = 128 kernel
            # (wgmma_overlap since step 30 runs D = 64 in series): its cost is at the D = 128 headline
            roles = [("D = 128", HEADLINE_D128)]
        for label, shape in [*roles, ("headline", HEADLINE), ("canonical", HEADLINE_CANONICAL)]:
            gain = _speedup(samples, step.name, step.parent, shape) if step.parent else None
            # Where the switch changes the kernel: the manifest says for its current kernel; a run
            # recorded on an earlier end timed the knock-out wherever it changed that end's kernel
            # (step 28's wgmma_overlap at D = 64, which step 30 runs in series anyway).
            applies = s.applies(shape.D, shape.causal) if kernel == s.kernel else (impl, shape) in samples
            cost = _speedup(samples, kernel, impl, shape) if applies else None
            dep_off = _also_off(s, impl, recorded_defines, by_name)
            rows.append(dict(switch=s.name, kernel=kernel, declared_in=s.kernel, step=step.name, parent=step.parent,
                             shape_role=label, shape=shape.tuple_label, applies=applies,
                             with_off=", ".join(dep_off), **_ci("gain", gain), **_ci("cost", cost)))
    return pd.DataFrame(rows)


def _also_off(s, impl: str, recorded_defines: dict, by_name: dict) -> list[str]:
    """The switches a knock-out of `s` was measured with off besides `s`: from the defines the run
    recorded for its build (a run recorded before a dependency was declared was built without it),
    else from the manifest's depends_on."""
    defines = recorded_defines.get(impl)
    if defines is None:
        return [d for d in sw.configuration(s.kernel, [s.name], by_name).off if d != s.name]
    return [d.name for d in by_name.values() if d.kernel == s.kernel and d.name != s.name and d.defines
            and all(defines.get(k) == v for k, v in d.defines.items())]


def _ci(prefix: str, ci: stats.SpeedupCI | None) -> dict:
    if ci is None:
        return {prefix: math.nan, f"{prefix}_lo": math.nan, f"{prefix}_hi": math.nan}
    return {prefix: ci.ratio, f"{prefix}_lo": ci.lo, f"{prefix}_hi": ci.hi}


def primary(tab: pd.DataFrame) -> pd.DataFrame:
    """One row per switch: headline shape where its switch applies there, else its judged shape,
    else the D = 128 headline (a switch of the D = 128 kernel only, judged at the headline)."""
    head = tab[(tab.shape_role == "headline") & tab.applies]
    judged = tab[(tab.shape_role == "judged") & ~tab.switch.isin(head.switch)]
    d128 = tab[(tab.shape_role == "D = 128") & tab.applies & ~tab.switch.isin(head.switch)]
    out = pd.concat([head, judged, d128]).drop_duplicates("switch")
    return out.sort_values("cost", ascending=False, na_position="last").reset_index(drop=True)


def figure(prim: pd.DataFrame, out_dir: Path) -> Path:
    """Ladder gain and knock-out cost side by side per optimization, sorted by knock-out cost."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    prim = prim.iloc[::-1].reset_index(drop=True)  # largest cost on top
    fig, ax = plt.subplots(figsize=(8, 0.55 * len(prim) + 1.6))
    y = np.arange(len(prim))
    for col, off, marker, label in (("gain", 0.15, "o", "ladder gain (step vs its parent)"),
                                    ("cost", -0.15, "s", "knock-out cost (last step vs last step without it)")):
        err = np.array([prim[col] - prim[f"{col}_lo"], prim[f"{col}_hi"] - prim[col]])
        ax.errorbar(prim[col], y + off, xerr=np.nan_to_num(err), fmt=marker, capsize=3, label=label)
    ax.axvline(1.0, color="grey", lw=0.8, ls="--")
    for yi, r in zip(y, prim.itertuples()):
        if math.isnan(r.gain) and math.isnan(r.cost):
            ax.text(1.0, yi, "  not measured in this run", va="center", fontsize=8, color="grey")
    names = [f"{r.switch}{' (+' + r.with_off + ' off)' if r.with_off else ''}\nin {r.kernel}, {r.shape}"
             for r in prim.itertuples()]
    ax.set_yticks(y, names, fontsize=8)
    ax.set_ylim(-0.6, len(prim) - 0.4)
    ax.set_xlabel("speedup, median ratio (x); > 1: the optimization makes the kernel faster; 95 % bootstrap intervals")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=1, frameon=False)  # above: no offset to guess
    path = out_dir / FIGURE
    save_figure(fig, path, dpi=130)
    plt.close(fig)
    return path


def _fmt(r, col) -> str:
    """Column `col` of a table row with its interval: '1.234x [1.200, 1.270]', 'n/a' where not measured."""
    return fmt_ci(getattr(r, col), getattr(r, col + "_lo"), getattr(r, col + "_hi"), mark="x", missing="n/a")


def carried_dependencies(meta: dict) -> dict[str, list[str]]:
    """Factor -> the switches outside the design that go off in every cell where the factor is off
    (its depends_on, which the design turns off with it: lab.studies.factorial.design's also_off)."""
    out = {}
    for factor in meta.get("factors", []):
        offs = [set(c.get("also_off", [])) for c in meta.get("cells", []) if c.get(factor) == -1]
        if offs and (common := set.intersection(*offs)):
            out[factor] = sorted(common)
    return out


def interactions(run) -> str:
    """Markdown table of the factorial's effects, or a line saying why there is none."""
    from lab.studies import factorial

    run_dir = _dir(run)
    meta = json.loads((run_dir / "factorial.json").read_text()) if (run_dir / "factorial.json").exists() else None
    eff = factorial.run_effects(records.RunRecord(run_dir.name, run_dir.parent, create=False)) if meta else None
    if eff is None:
        reason = (meta or {}).get("reason", "this run has no factorial (knockouts off, or recorded before it existed)")
        return f"No interaction table: {reason}.\n"
    reps = int(eff["replicates"].max()) if "replicates" in eff.columns and len(eff) else 1
    how = ("95 % cell-bootstrap intervals" if reps == 1 else
           f"95 % intervals over {reps} replicates (OLS per replicate, averaged; random effects, as the speedups)")
    lines = [f"Factorial over {', '.join(meta['factors'])} (`{meta['formula']}`, OLS on the +-1 coding, hot mode); "
             f"ratio = latency with the switch(es) on / off (< 1: faster on), {how}.", ""]
    for factor, deps in carried_dependencies(meta).items():
        lines.append(f"- {factor} off also turns off {', '.join(deps)} (it depends on {'them' if len(deps) > 1 else 'it'}; "
                     f"not {'factors' if len(deps) > 1 else 'a factor'}): the {factor} terms include "
                     f"{'their' if len(deps) > 1 else 'its'} effect")
    for cell in meta.get("skipped", []):
        lines.append(f"- skipped cell: {cell['reason']}")
    for term in meta.get("not_estimable", []):
        lines.append(f"- {term}: not estimable (a switch and its dependency: the skipped cells alias it)")
    rows = [[Shape(r.B, r.H, r.S, r.D, bool(r.causal)).tuple_label, r.term, r.kind,
             f"{r.ratio:.4f}" + ("" if r.ratio_lo <= 1 <= r.ratio_hi else " *"), f"[{r.ratio_lo:.4f}, {r.ratio_hi:.4f}]",
             "yes" if r.applies else "no"] for r in eff.itertuples()]
    lines += ["", md_table(["shape", "term", "kind", "ratio", "95 % interval", "applies"], rows, compact=True)]
    lines.append("\n`*`: the interval excludes 1.")
    null = eff[~eff["applies"].astype(bool)]
    if len(null):  # a term whose switch does not change the kernel at that shape: its effect is 0 by construction
        held = int(((null["ratio_lo"] <= 1) & (null["ratio_hi"] >= 1)).sum())
        lines.append(f"\nTerms that change nothing at their shape (applies = no, a null factor): {held} of {len(null)} "
                     "intervals contain 1, as calibrated 95 % intervals should for about 95 % of them.")
    return "\n".join(lines) + "\n"


def _profile_note(run_dir: Path, kernel: str, impl: str, shape_str: str) -> str:
    path = run_dir / "profile.csv"
    if not path.exists():
        return "not profiled in this run"
    prof = pd.read_csv(path)
    prof["shape"] = [Shape(r.B, r.H, r.S, r.D, bool(r.causal)).tuple_label for r in prof.itertuples()]
    rows = prof[(prof["shape"] == shape_str) & prof["ok"].astype(bool)].set_index("impl")
    if kernel not in rows.index or impl not in rows.index:
        return f"no profile of both {kernel} and {impl} at {shape_str}"
    parts = []
    for m in PROFILE_METRICS:
        if m in rows.columns and pd.notna(rows.at[kernel, m]) and pd.notna(rows.at[impl, m]):
            parts.append(f"{m} {rows.at[kernel, m]:.4g} with it vs {rows.at[impl, m]:.4g} without")
    stall = lambda i: str(rows.at[i, "top_stalls"]).split(";")[0] if "top_stalls" in rows.columns else "?"  # noqa: E731
    parts.append(f"top stall {stall(kernel)} with it vs {stall(impl)} without")
    return "; ".join(parts)


def section(run, figures_dir, figure_link: str | None = None) -> str:
    """Markdown for the knock-out section; writes the figure to figures_dir."""
    run_dir = _dir(run)
    tab = table(run_dir)
    if tab.empty or tab["cost"].isna().all():
        return "## Ablation by knock-out\n\nThis run has no knock-out measurements.\n"
    prim = primary(tab)
    fig = figure(prim, figures_dir)
    out = ["## Ablation by knock-out", "",
           "Each optimization the last step can switch off: its **ladder gain** (the step that introduced it "
           "against its parent) beside its **knock-out cost** (the last step against the last step without it). "
           "Both are speedups of medians, > 1 when the optimization makes the kernel faster, hot mode, with 95 % "
           "bootstrap intervals. A switch whose removal needs another off too is measured with both off "
           "and shown as a dependency.", "", f"![knock-outs]({figure_link or fig.name})", ""]
    rows = []
    for r in tab.itertuples():
        note = f"measured with {r.with_off} off too (dependency)" if r.with_off else ""
        if not r.applies:
            note = "the switch does not change this shape's kernel"
        rows.append([f"{r.switch} (step {r.step}, in {r.kernel})", f"{r.shape} ({r.shape_role})", _fmt(r, "gain"),
                     _fmt(r, "cost"), note])
    out.append(md_table(["optimization", "shape", "ladder gain", "knock-out cost", "note"], rows, compact=True))
    out += ["", _disagreement(run_dir, prim), "", "### Interactions", "", interactions(run_dir),
            "### Not removable", ""]
    measured_in = dict(zip(tab.declared_in, tab.kernel))  # a run from before the branch grew: its own end (run_kernel)
    for st in sw.load()[1]:
        if st.kernel in measured_in:
            out.append(f"- {', '.join(st.ideas)} ({measured_in[st.kernel]}): {st.reason}")
    return "\n".join(out) + "\n"


def _disagreement(run_dir: Path, prim: pd.DataFrame) -> str:
    both = prim.dropna(subset=["gain", "cost"]).copy()
    if both.empty:
        return "No optimization has both a ladder gain and a knock-out cost in this run."
    both["gap"] = (np.log(both["gain"]) - np.log(both["cost"])).abs()
    lines = ["Where the two numbers disagree most:"]
    for r in both.sort_values("gap", ascending=False).head(2).itertuples():
        lines.append(f"- **{r.switch}** at {r.shape}: ladder gain {_fmt(r, 'gain')}, knock-out cost "
                     f"{_fmt(r, 'cost')}. Profile: {_profile_note(run_dir, r.kernel, sw.knockout_impl(r.kernel, r.switch), r.shape)}.")
    return "\n".join(lines)
