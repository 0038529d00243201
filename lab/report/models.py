"""The attention real models run (issue 22): a run's `models` shapes (lab.studies.shapes.MODELS: bf16,
grouped-query and multi-query K/V heads) as tables and a figure, which steps take which element
type and K/V layout (build.json), how the kernels' grids keep query heads that share a K/V head
together, and the correctness counts per element type and head layout (correctness.json).

Everything here is computed from the run folder and the manifest; a run without model shapes (every
run before issue 22) has none of it, and the report says nothing about it.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from lab.kernels.shape import Shape
from lab.measure import stats
from lab.report import branches
from lab.report.formats import MISSING, fmt, fmt_ci, fmt_us, md_table, save_figure
from lab.report.load import SUSTAINED, RunData
from lab.studies.shapes import model_names

FLEX = "flex_attention"
LOWER_END = 0.99  # a speedup counts as "at least 1x" where its interval's lower end is above this (issue 22)


def model_shapes(data: RunData) -> list[Shape]:
    """The measured shapes that are a model's attention (lab.studies.shapes.model_names), in run order."""
    return [s for s in data.measured_shapes if model_names(s)]


def label(shape: Shape) -> str:
    """'Llama-3-8B, Mistral-7B': the models a shape stands for."""
    return ", ".join(model_names(shape))


def kernels(data: RunData, shape: Shape, mode: str) -> list[str]:
    """The run's steps timed at `shape` in `mode`, in branch order (no knock-out, no A/A twin)."""
    return [v for v in branches.steps(data) if data.lat(v, shape, mode) is not None]


def fp16_twin(data: RunData, shape: Shape) -> Shape | None:
    """The same problem in fp16, where the run measured it (the `models-fp16` set): bf16 is judged
    against it (issue 22: a bf16 row no more than 2 % slower than the fp16 row of its shape)."""
    if shape.dtype == "fp16":
        return None
    twin = Shape(*shape.dims, shape.causal, shape.H_kv, "fp16")
    return twin if twin in data.measured_shapes else None


def _tflops(shape: Shape, med) -> float | None:
    # the study's one FLOP count (lab.measure.stats.attention_flops): grouping K/V heads changes no FLOP
    return stats.tflops(shape.B, shape.H, shape.S, shape.D, shape.causal, med) if med else None


def latency_table(data: RunData, shapes: list[Shape], mode: str) -> tuple[list[str], list[list], str]:
    """(headers, rows, align): per shape, every implementation's median µs and TFLOP/s."""
    impls: list[str] = []
    for s in shapes:
        for i in kernels(data, s, mode) + data.peers(s):
            if i not in impls and data.lat(i, s, mode) is not None:
                impls.append(i)
    headers = ["model", "shape (B, H, S, D)", "K/V heads", "dtype"] + [f"{i} µs (TFLOP/s)" for i in impls]
    rows = []
    for s in shapes:
        row = [label(s), f"({s.B}, {s.H}, {s.S}, {s.D}){' causal' if s.causal else ''}", str(s.H_kv), s.dtype]
        for i in impls:
            med = data.median(i, s, mode)
            row.append(f"{fmt_us(med)} ({fmt(_tflops(s, med), 0)})" if med else MISSING)
        rows.append(row)
    return headers, rows, "llrl" + "r" * len(impls)


def speedup_rows(data: RunData, shapes: list[Shape], mode: str) -> list[dict]:
    """Per shape and step timed there: the fastest peer, the step's speedup over it and over
    flex_attention (RunData.speedup: round by round where the run recorded rounds, with 95 %
    intervals over the run's replicates), and over its fp16 twin where measured (bf16 / fp16 speed)."""
    out = []
    for s in shapes:
        fastest = data.fastest_peer(s, mode)
        twin = fp16_twin(data, s)
        for k in kernels(data, s, mode):
            vs_peer = data.speedup(k, fastest, s, mode) if fastest else None
            vs_flex = data.speedup(k, FLEX, s, mode) if data.lat(FLEX, s, mode) is not None else None
            a, b = data.reps(k, s, mode), data.reps(k, twin, mode) if twin else None
            vs_fp16 = stats.speedup_ci(a, b, seed=0) if a and b else None
            out.append(dict(shape=s, kernel=k, fastest=fastest, vs_peer=vs_peer, vs_flex=vs_flex, vs_fp16=vs_fp16))
    return out


def sustained_statement(data: RunData, shapes: list[Shape]) -> str:
    """Which rows the sustained mode timed at these model shapes (the headline branch's end, its parent and
    lab.studies.shapes.SUSTAINED_PEERS: not every peer the burst modes time), so that its fastest peer is the
    fastest of those."""
    steps = list(dict.fromkeys(k for s in shapes for k in kernels(data, s, SUSTAINED)))
    peers = list(dict.fromkeys(p for s in shapes for p in data.peers(s) if data.lat(p, s, SUSTAINED) is not None))
    where = "the one model shape" if len(shapes) == 1 else f"the {len(shapes)} model shapes"
    return (f"Sustained (back to back at the power limit: \"Burst and sustained\"), at {where} the run's SUSTAINED "
            f"names: {', '.join(f'`{k}`' for k in steps) or 'no step'} and "
            f"{', '.join(peers) or 'no peer'} only, so the fastest peer below is the fastest of "
            f"{'those' if len(peers) > 1 else 'that one'}.")


def _ci(ci) -> str:
    return fmt_ci(ci.ratio, ci.lo, ci.hi) if ci is not None else MISSING


def speedup_table(rows: list[dict]) -> tuple[list[str], list[list], str]:
    with_fp16 = any(r["vs_fp16"] is not None for r in rows)
    headers = ["model", "shape", "step", "fastest peer", "vs fastest peer [95% CI]", f"vs {FLEX} [95% CI]"]
    headers += ["bf16 vs fp16 speed [95% CI]"] if with_fp16 else []
    body = []
    for r in rows:
        line = [label(r["shape"]), r["shape"].tuple_label, r["kernel"], r["fastest"] or MISSING, _ci(r["vs_peer"]),
                _ci(r["vs_flex"])]
        body.append(line + ([_ci(r["vs_fp16"])] if with_fp16 else []))
    return headers, body, "lllllr" + ("r" if with_fp16 else "")


def verdicts(rows: list[dict]) -> list[str]:
    """Per step, the issue's targets in one sentence each: at least 1x the fastest peer and
    flex_attention (the interval's lower end above LOWER_END), bf16 within 2 % of fp16."""
    out = []
    for k in dict.fromkeys(r["kernel"] for r in rows):
        mine = [r for r in rows if r["kernel"] == k]
        n = len(mine)
        peer_ok = sum(r["vs_peer"] is not None and r["vs_peer"].lo > LOWER_END for r in mine)
        flex = [r for r in mine if r["vs_flex"] is not None]
        flex_ok = sum(r["vs_flex"].lo > LOWER_END for r in flex)
        text = (f"`{k}`: at or above the fastest peer (interval's lower end above {LOWER_END}) at {peer_ok} of {n} "
                f"shape × mode rows")
        if flex:
            text += f"; at or above {FLEX} at {flex_ok} of {len(flex)}"
        twins = [r for r in mine if r["vs_fp16"] is not None]
        if twins:
            worst = min(twins, key=lambda r: r["vs_fp16"].ratio)
            text += (f"; bf16 at {fmt_ci(worst['vs_fp16'].ratio, worst['vs_fp16'].lo, worst['vs_fp16'].hi)} the "
                     f"speed of fp16 at worst, at {worst['shape'].tuple_label}")
        out.append(text + ".")
    return out


APART = 0.01  # a speedup this far from the ratio of the table's medians is named beside the table


def apart_from_medians(data: RunData, rows: list[dict], mode: str) -> list[str]:
    """The speedups over the fastest peer and flex_attention that differ from the ratio of the two
    medians in the latency table by more than APART (only where they can: a run compared round by
    round), each with both figures."""
    out = []
    for r in rows:
        for base, ci in ((r["fastest"], r["vs_peer"]), (FLEX, r["vs_flex"])):
            med = data.median_ratio(r["kernel"], base, r["shape"], mode) if ci is not None and ci.by_round else None
            if med is not None and abs(ci.ratio / med - 1) > APART:
                out.append(f"{label(r['shape'])} {r['shape'].tuple_label}, `{r['kernel']}` over {base}: "
                           f"{fmt_ci(ci.ratio, ci.lo, ci.hi)} round by round, {med:.3f}× by the medians")
    return out


# --- which steps take what, and how the grids order work -----------------------------------------


def inputs_statement(data: RunData) -> str:
    """Which steps take which element type and K/V layout, from build.json (a record without the
    fields: fp16 with as many K/V heads as query heads, what every step took before issue 22)."""
    groups: dict[tuple, list[str]] = {}
    for name in branches.steps(data):
        b = data.build.get(name) if isinstance(data.build, dict) else None
        dtypes = tuple((b or {}).get("dtypes") or ("fp16",))
        kv = (b or {}).get("kv_heads") or "same"
        groups.setdefault((dtypes, kv), []).append(name)
    parts, total = [], sum(len(n) for n in groups.values())
    # the steps that take the most first: more element types, then grouped K/V heads
    for k, ((dtypes, kv), names) in enumerate(sorted(groups.items(), key=lambda g: (-len(g[0][0]), g[0][1] != "grouped"))):
        heads = ("any number of K/V heads that divides the query heads (grouped-query and multi-query attention, "
                 "SDPA's enable_gqa mapping)" if kv == "grouped" else "as many K/V heads as query heads")
        if len(names) <= 4:
            who = ", ".join(f"`{n}`" for n in names)
        else:
            who = (f"the other {len(names)} steps" if k else
                   f"{len(names)} of the {total} steps ({branches.numbers(names)})" if len(names) < total else
                   f"all {len(names)} steps")
        parts.append(f"{who} {'takes' if len(names) == 1 else 'take'} {' and '.join(dtypes)} with {heads}")
    return ("By build.json (each library's fa_dtypes and fa_grouped_kv, checked against the manifest when it "
            "loads): " + "; ".join(parts) + ". The knock-outs and the tuned dispatch are built from the switchable "
            "twins of earlier ends and take what those take; a step asked for inputs it does not take is not timed "
            "there, and the run records it as not taken.")


# From step 49 on, a D = 64 call's query rows a tile depend on its shape (kernels/include/fa/tile_size.cuh's
# run_hopper_tile: 64, or the three-warpgroup tile's 192), which build.json's one number a head dim cannot say.
SHAPE_DEPENDENT_TILE_D64 = "three_warpgroups_d64"


def _rows_per_tile(data: RunData, kernel: str, D: int) -> int | None:
    b = data.build.get(kernel) if isinstance(data.build, dict) else None
    launch = ((b or {}).get("launch") or {}).get(str(D)) or {}
    rows = launch.get("rows_per_block")
    return int(rows) if isinstance(rows, (int, float)) and rows > 0 else None


def grid_order(data: RunData, shapes: list[Shape]) -> list[str]:
    """How the kernels order their work so that query heads sharing a K/V head run close together
    (L2 reuse of each K/V tile), with each shape's numbers: how many consecutive work tiles read one
    K/V head (query tiles per head x query heads per K/V head), against the CTAs of one round."""
    sms = data.env.get("sm_count")
    static = ("walks the work tiles (batch, head, query tile) with the query tiles fastest and the heads in order, "
              "so the H / H_kv query heads that share a K/V head are consecutive work items, handed out round-robin "
              "to neighbouring CTAs in one round")
    if "longest_first_queue" in branches.steps(data):  # step 35 on: the counter where the launch allows it
        sm90 = ("The sm_90a end takes its work tiles from a counter where the launch allows it "
                "(kernels/include/fa/tile_queue.cuh): in sections of (batch, head) matrices whose K and V fit two "
                "fifths of the L2, heaviest query tiles first, the section's heads fastest, so the query heads of "
                "one K/V head are consecutive tiles at every level and the CTAs of a moment read the section's "
                "few K/V heads from L2. A launch whose last section would hold fewer than four tiles a CTA (too "
                "few to balance the end) keeps step 27's static list, which " + static + " (the table below: "
                "that order's runs)")
        if "three_wgs_queue_causal_d64" in branches.steps(data):
            sm90 += ("; from step 52, a causal D = 64 call whose static pairs of 192-row tiles would leave the last "
                     "round part empty takes the counter over one section of every head (the 192-row tiles are too "
                     "few for a section of each L2's worth)")
    else:
        sm90 = "The sm_90a end's persistent scheduler " + static
    lines = [sm90 + "; the portable end's grid is (query tiles, H, B), so CTAs neighbouring in blockIdx.y share "
             "their K/V head the same way. Neither copies K or V per query head: each CTA loads the K/V tiles of "
             "its own K/V head."]
    rows = []
    for s in shapes:
        for k in kernels(data, s, "hot"):
            tile = _rows_per_tile(data, k, s.D)
            if tile is None:
                continue
            if s.D == 64 and SHAPE_DEPENDENT_TILE_D64 in branches.lineage(k):
                rows.append([label(s), s.tuple_label, k, "by shape", str(s.group), MISSING, MISSING])
                continue
            run = math.ceil(s.S / tile) * s.group  # consecutive work tiles on one K/V head
            rounds = f"{run / sms:.2f}" if isinstance(sms, (int, float)) and sms else MISSING
            rows.append([label(s), s.tuple_label, k, str(tile), str(s.group), str(run), rounds])
    if rows:
        lines += ["", md_table(["model", "shape", "step", "query rows a tile", "query heads a K/V head",
                                "consecutive work tiles a K/V head", f"of one round ({sms or MISSING} SMs)"],
                               rows, "lllrrrr")]
        if any(r[3] == "by shape" for r in rows):
            lines += ["", "\"By shape\": the step's D = 64 tile (64 or 192 query rows) is chosen per call by "
                      "kernels/include/fa/tile_size.cuh's rules, which the build's record does not hold."]
    return lines


def correctness_counts(data: RunData) -> list[list]:
    """Rows (dtype, head layout, checks run, passed, failed, not taken) from correctness.json (the
    variants) and peer_correctness.json (the peers other than SDPA), by lab.measure.check.counts."""
    from lab.measure import check

    records = []
    for name in ("correctness.json", "peer_correctness.json"):
        got = data.read_json(name, [], quiet=True)
        records += got if isinstance(got, list) else []
    if not records:
        return []
    counts = check.counts(records)
    order = {"fp16": 0, "bf16": 1}, {"MHA": 0, "GQA": 1, "MQA": 2}
    return [[d, layout, str(c["cases"]), str(c["passed"]), str(c["failed"]), str(c["not_taken"])]
            for (d, layout), c in sorted(counts.items(), key=lambda kv: (order[0].get(kv[0][0], 9),
                                                                         order[1].get(kv[0][1], 9)))]


# --- the figure -----------------------------------------------------------------------------------


def figure_models(data: RunData, shapes: list[Shape], path: Path, mode: str = "hot") -> str | None:
    """Left: TFLOP/s of every implementation per model shape (hot medians); right: each step's
    speedup over the fastest peer with its 95 % interval."""
    from lab.report.figures import new_figure, set_style, impl_colors

    if not shapes:
        return "no model shapes measured: models figure skipped"
    impls = list(dict.fromkeys(i for s in shapes for i in kernels(data, s, mode) + data.peers(s)
                               if data.lat(i, s, mode) is not None))
    rows = speedup_rows(data, shapes, mode)
    pal = impl_colors(data, impls)
    with set_style():
        fig = new_figure((13.0, 0.5 * len(shapes) + 2.8))
        ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.4, 1]})
        y = np.arange(len(shapes))[::-1]
        height = 0.8 / max(len(impls), 1)
        for j, impl in enumerate(impls):
            vals = [_tflops(s, data.median(impl, s, mode)) or 0.0 for s in shapes]
            ax.barh(y + 0.4 - height * (j + 0.5), vals, height=height, color=pal[impl], label=impl)
        labels = [f"{label(s)}\n{s.tuple_label}" for s in shapes]
        ax.set_yticks(y)
        ax.set_yticklabels(labels, fontsize=7)
        ax.set_xlabel(f"TFLOP/s ({mode} median; 4·B·H·S²·D, halved for causal)")
        ax.set_title("Throughput per model shape")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.09 - 0.6 / (len(shapes) + 4)), ncol=min(len(impls), 4),
                  fontsize=7, frameon=False)
        ks = list(dict.fromkeys(r["kernel"] for r in rows))
        step_h = 0.8 / max(len(ks), 1)
        index = {s: i for i, s in enumerate(shapes)}
        for j, k in enumerate(ks):
            pts = [(r["vs_peer"], y[index[r["shape"]]] + 0.4 - step_h * (j + 0.5)) for r in rows
                   if r["kernel"] == k and r["vs_peer"] is not None]
            if pts:
                ci, yy = zip(*pts)
                ratio = np.array([c.ratio for c in ci])
                ax2.errorbar(ratio, yy, xerr=[ratio - [c.lo for c in ci], [c.hi for c in ci] - ratio], fmt="o",
                             color=pal.get(k, "black"), ecolor="black", elinewidth=1, capsize=3, ms=5, label=k)
        ax2.axvline(1.0, color="black", lw=1, ls="--")
        ax2.set_yticks(y)
        ax2.set_yticklabels([""] * len(shapes))
        ax2.set_ylim(ax.get_ylim())
        ax2.set_xlabel("speedup over the fastest peer (95 % interval)")
        ax2.set_title("Against the fastest peer")
        if ks:
            ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.09 - 0.6 / (len(shapes) + 4)), ncol=len(ks),
                       fontsize=7, frameon=False)
        fig.suptitle(f"The attention real models run: prefill, {mode}", fontsize=10)
        save_figure(fig, path)
    return None


def cost_statement(data: RunData, shapes: list[Shape]) -> str:
    """What the models set cost the run: its jobs' seconds over the replicates, flex_attention's
    compiles for its shapes ahead of the timing stage, and, where the run recorded the timing stage's
    wait for those compiles, the two together: what the set adds to the run's wall time, counting all of
    the wait as the set's (its compiles can account for no more of it). '' for a run that recorded
    neither."""
    parts, jobs, waited = [], data.scope_seconds.get("models"), None
    if jobs:
        parts.append(f"Its jobs took {jobs:.1f} s of the timing stage"
                     + (f" over the {data.replicates} replicates" if data.replicates > 1 else "")
                     + " (each replicate's notes, replicates.json)")
    if isinstance(data.flex_warmup, dict):
        ids = {s.id for s in shapes}
        warm = sum(float(r.get("seconds") or 0) for r in data.flex_warmup.get("shapes", []) if r.get("shape") in ids)
        if warm:
            between = data.stages.get("between") if isinstance(data.stages, dict) else None
            waited = (between or {}).get("flex_warmup_wait_s")
            workers = data.flex_warmup.get("workers")
            parts.append(f"flex_attention's compiles for its shapes took {warm:.1f} s of the background warm-up "
                         + (f"({workers} processes side by side, {float(data.flex_warmup.get('seconds') or 0):.1f} s "
                            "of wall time for every shape) " if workers else "")
                         + "beside the correctness stage, which the timing stage waits for where it outlasts that "
                         "stage (flex_warmup.json" + ("" if waited is None else
                                                      f"; this run's timing stage waited {waited:.1f} s for all of "
                                                      "it, stages.json") + ")")
    if jobs and waited is not None:
        parts.append(f"its jobs and that wait came to {jobs + waited:.1f} s of the run's wall time")
    return ("**What the set costs.** " + "; ".join(parts) + ".") if parts else ""
