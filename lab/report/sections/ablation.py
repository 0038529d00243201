"""The ablation section (speed, profile, hypotheses, what was not delivered, figures) and the bar."""

from __future__ import annotations

from lab.report import branches
from lab.report.bar import bar_rule, bar_step, portable_bar, success_bar
from lab.report.formats import (FIGURES, METRIC_MOVE, MISSING, PEER, isnum, fmt, fmt_ci, fmt_g, fmt_p, fmt_us, md_table,
                                new_lines, shape_label)
from lab.report.context import Context
from lab.report.figures import figure_latency, figure_speedup
from lab.report.load import manifest_variant
from lab.report.tables import hypothesis_rows


def step_number(r) -> str:
    return str(int(r.step)) if isnum(r.step) else MISSING


def _ablation_intro(ctx: Context) -> list[str]:
    """The section heading and which shapes its columns come from."""
    data, head, ps, best = ctx.data, ctx.head, ctx.abl.attrs.get("profile_shape"), ctx.abl.attrs.get("best_sdpa")
    L, add = new_lines()
    add(f"## Ablation at {shape_label(head)} (hot)")
    add("")
    add(f"Rows go branch by branch: {branches.summary(data.variants)}. Every step is compared with its parent, "
        "whose number is in the `parent` column.")
    add("")
    add(f"Timing columns: {shape_label(head)}, hot mode. Fastest SDPA backend here: **{best or MISSING}**."
        + (f" Profile columns (tables 2 and 3) come from the profiled shape **{ps}**"
           + (" (the same shape)." if ps == shape_label(head) else " (a different B/H: same S and D).")
           if ps else f" No profile data matches S={head.S}, D={head.D}"
           + (f" ({data.profile_note})" if data.profile_note else "") + "."))
    add("")
    return L


def _speed_table(ctx: Context) -> list[str]:
    """Table 1: each step's speed, against SDPA and against its parent."""
    data, abl, best = ctx.data, ctx.abl, ctx.abl.attrs.get("best_sdpa")
    L, add = new_lines()
    add("**1. Speed.**")
    add("")
    rows = []
    for r in abl.itertuples():
        parent = _step_of(r.parent)
        if r.status != "measured":
            rows.append([step_number(r), r.title, parent, r.status] + [MISSING] * 8)
            continue
        rows.append([step_number(r), r.title, parent, fmt_us(r.median_us), fmt(r.tflops, 1), fmt(r.pct_tensor_peak, 1),
                     fmt_ci(r.vs_sdpa_flash, r.vs_sdpa_flash_lo, r.vs_sdpa_flash_hi),
                     fmt_ci(r.vs_best_sdpa, r.vs_best_sdpa_lo, r.vs_best_sdpa_hi),
                     fmt_ci(r.vs_parent, r.vs_parent_lo, r.vs_parent_hi) if r.parent else "(reference)",
                     fmt(r.cliffs_delta, 2), fmt_p(r.p_adjusted), r.speed_verdict or MISSING])
    add(md_table(["#", "step", "parent", "median µs", "TFLOP/s", "% of tensor ceiling", f"vs {PEER} [95% CI]",
                  f"vs fastest SDPA ({best}) [95% CI]", "vs parent [95% CI]", "Cliff's δ", "p (BH)",
                  "verdict vs parent"], rows, "lllrrrrrrrrl"))
    add("")
    if data.ceilings is None:
        add(f"% of tensor ceiling: {MISSING}, no measured ceilings in this run"
            + (f" ({data.ceilings_error})." if data.ceilings_error else "."))
        add("")
    return L


def _step_of(name: str) -> str:
    """The manifest number of step `name` ('—' for none: the first step has no parent)."""
    v = manifest_variant(name) if name else None
    return str(v.index) if v else (name or MISSING)


def _profile_table(ctx: Context) -> list[str]:
    """Table 2: each step's profiler metrics."""
    abl, ps = ctx.abl, ctx.abl.attrs.get("profile_shape")
    L, add = new_lines()
    add(f"**2. Profile** at {ps or MISSING}.")
    add("")
    rows = []
    for r in abl.itertuples():
        if r.profile_note:
            rows.append([step_number(r), r.title, r.profile_note] + [MISSING] * 6)
            continue
        rows.append([step_number(r), r.title, fmt(r.profile_duration_us, 1), fmt(r.dram_gbps, 1),
                     fmt(r.achieved_occupancy, 1), fmt(r.registers, 0),
                     fmt(r.smem_per_block / 1024 if isnum(r.smem_per_block) else None, 1),
                     fmt_g(r.bank_conflict_pct), fmt_g(r.tensor_pipe_pct)])
    add(md_table(["#", "step", "ncu duration µs", "DRAM GB/s", "achieved occupancy %", "registers/thread",
                  "smem/block KiB", "bank conflicts %", "tensor pipe %"], rows, "llrrrrrrr"))
    add("")
    return L


def _hypotheses_table(ctx: Context) -> list[str]:
    """Table 3: each hypothesis, its metric's move and the verdict."""
    data, abl, ps = ctx.data, ctx.abl, ctx.abl.attrs.get("profile_shape")
    L, add = new_lines()
    hyp = hypothesis_rows(data, abl)
    add(f"**3. Hypotheses** (metric values at {ps or MISSING}"
        + ("; a step whose manifest names a `judged_at` shape is judged there, as its row says"
           if (hyp.judged_at != "").any() else "") + ").")
    add("")
    rows = []
    for r in hyp.itertuples():
        pred = f"{fmt(r.predicted_lo, 2)}–{fmt(r.predicted_hi, 2)}×" if isnum(r.predicted_lo) else MISSING
        move = (f"{fmt_g(r.metric_parent)} → {fmt_g(r.metric_value)}"
                + (f" ({r.metric_change_pct:+.1f} %)" if isnum(r.metric_change_pct) else
                   " (from 0)" if r.metric_change_pct is not None and r.metric_parent == 0 and r.metric_value
                   else "")) if r.parent else f"{fmt_g(r.metric_value)} (reference)"
        measured = fmt_ci(r.vs_parent, r.vs_parent_lo, r.vs_parent_hi) if r.parent else MISSING
        if r.judged_at:
            metric_at = r.metric_shape if isinstance(r.metric_shape, str) else ""
            move = (f"at {r.judged_at}: {move}" if metric_at == r.judged_at
                    else f"at {metric_at} (for {r.judged_at}): {move}" if metric_at
                    else f"not profiled at {r.judged_at}")
            measured = f"at {r.judged_at}: {measured}"
        rows.append([step_number(r), r.title, _step_of(r.parent), r.change, r.hypothesis, f"{r.metric} ({r.direction})",
                     move, pred,
                     measured + (f", {r.vs_prediction} the predicted range" if r.vs_prediction != MISSING else ""),
                     f"**{r.hypothesis_verdict}**"])
    add(md_table(["#", "step", "parent", "change", "hypothesis", "predicted metric (direction)", "parent → this step",
                  "predicted speedup", "measured vs parent", "verdict"], rows))
    add("")
    add(f"Verdict rule: **confirmed** when the hypothesis metric moved the predicted way by more than "
        f"{METRIC_MOVE * 100:.0f} % (relative, parent → step) and the step is *faster* than its parent (or "
        f"*within noise* where the predicted range includes 1.0); **refuted** when the metric moved the other "
        f"way by more than {METRIC_MOVE * 100:.0f} % or the step is *slower*; **inconclusive** otherwise; "
        "**inconclusive (no profile)** when either profile value is missing (a step judged at a causal shape "
        "is read from a causal launch, never a non-causal one). The metric comes from the "
        "manifest's `metric`, mapped to a profile.csv column by `lab.measure.ncu_metrics.HYPOTHESIS_METRICS`. "
        "\"Below/within/above the predicted range\" compares the speedup's CI with the predicted range.")
    add("")
    return L


def _not_delivered(ctx: Context) -> list[str]:
    """The steps that did not deliver, in plain words."""
    L, add = new_lines()
    hyp = hypothesis_rows(ctx.data, ctx.abl)

    def where(r) -> str:
        return f" at {r.judged_at}" if r.judged_at else ""

    plain = []
    for r in hyp.itertuples():
        if not r.parent:
            continue
        if r.status != "measured":
            plain.append(f"**{r.title}** ({r.variant}) was not measured here: {r.status}.")
        elif r.speed_verdict == "within noise":
            plain.append(f"**{r.title}** ({r.variant}) did not measurably help: "
                         f"{fmt_ci(r.vs_parent, r.vs_parent_lo, r.vs_parent_hi)} against {r.parent}"
                         f"{where(r)}, within noise.")
        elif r.speed_verdict == "slower":
            plain.append(f"**{r.title}** ({r.variant}) made things worse: "
                         f"{fmt_ci(r.vs_parent, r.vs_parent_lo, r.vs_parent_hi)} against {r.parent}{where(r)}.")
        elif r.vs_prediction == "below":
            plain.append(f"**{r.title}** ({r.variant}) helped less than predicted: "
                         f"{fmt_ci(r.vs_parent, r.vs_parent_lo, r.vs_parent_hi)}{where(r)} against the predicted "
                         f"{fmt(r.predicted_lo, 2)}–{fmt(r.predicted_hi, 2)}×.")
    if plain:
        add("Steps that did not deliver:")
        add("")
        for p in plain:
            add(f"- {p}")
        add("")
    return L


def _ablation_figures(ctx: Context) -> list[str]:
    """The speedup and latency figures."""
    data, head, abl, notes, figdir = ctx.data, ctx.head, ctx.abl, ctx.notes, ctx.figdir
    L, add = new_lines()
    notes["speedup"] = figure_speedup(abl, figdir / FIGURES["speedup"])
    notes["latency"] = figure_latency(data, head, figdir / FIGURES["latency"])
    for key, caption in (("speedup", "Speedup of each step over its parent and over " + PEER
                          + " (95 % interval; dashed line at 1.0)"),
                         ("latency", f"Hot latency distributions at {shape_label(head)}: each branch's end, its A/A "
                          "twin and the peers")):
        ctx.add_figure(add, key, caption)
    return L


def section_ablation(ctx: Context) -> list[str]:
    """The ablation at the headline shape: speed, profile and hypotheses tables, then its figures."""
    if ctx.head is None or not len(ctx.abl):
        return []
    return [ln for part in (_ablation_intro, _speed_table, _profile_table, _hypotheses_table, _not_delivered,
                            _ablation_figures) for ln in part(ctx)]


def section_bar(ctx: Context) -> list[str]:
    data = ctx.data
    L, add = new_lines()
    best = bar_step(data)
    bar = success_bar(data, best) if best else []
    if bar:
        add("## Against SDPA: the bar")
        add("")
        add(f"The bar the study set itself: {best} ({branches.role(data, best)}) against the fastest SDPA backend "
            f"measured in this run at each shape and mode (what `scaled_dot_product_attention` gives a user; "
            f"{PEER}, FlashAttention-2, is shown beside it), measured by this harness. " + bar_rule() + " Where a part is missed, the launch shape and the profiler say "
            "what stands in the way.")
        add("")
        for line in bar:
            add(line)
    end = branches.portable_end(data)
    portable = portable_bar(data, end) if end and end != best else []
    if portable:
        add("## The portable branch against FlashAttention-2")
        add("")
        add(f"On a GPU without sm_90a the study ends on the portable branch, and the kernel a user would pick "
            f"there is FlashAttention-2 ({PEER}, the same mma.sync, ldmatrix and cp.async). The portable "
            f"branch's end, {end}, against it at every shape of the canonical and large sets "
            "(`lab.studies.shapes`), with the bar's rules:")
        add("")
        for line in portable:
            add(line)
    return L
