"""Against FlashAttention-3: the end of the sm_90a branch against flash_attn3 (FlashAttention-3's own compiled forward
kernels, the field's reference Hopper kernel) at every shape of the canonical, large and long sets the run measured,
in each burst mode and, at the sustained shapes, sustained; with the bar's parity rule; then issue 46's four targets
judged from the run (a row it did not measure is not met). The models set's rows against it are in "The attention
real models run". Absent where the run has no flash_attn3 or no arch-specific step (FA3
runs on Hopper only, and "Not measured in this run" says why it is missing)."""

from __future__ import annotations

import pandas as pd

from lab.kernels.shape import Shape
from lab.report import branches
from lab.report.bar import BAR_PARITY, BAR_PARITY_LO, at_parity, peer_rows, row_level
from lab.report.context import (Context, base_on_another_gpu, companion_modes, companion_of, companion_words,
                                companions_for)
from lab.report.formats import fmt_ci, fmt_us, md_table, shape_label
from lab.report.load import HOT, SUSTAINED, RunData
from lab.studies.shapes import model_names, shape_set

REFERENCE = "flash_attn3"
REFERENCE_SETS = ("canonical", "large", "long")

# Issue 46's targets, judged in the run that has FA3 (each on this run's GPU; the issue asks for an H100 and an H200).
# "At least r": the paired speedup's point estimate at least r and its 95 % interval's lower end above r - 0.01.
TARGET_MARGIN = 0.01
TARGET_MODES = (HOT, SUSTAINED)
# Target 1: the end against FA3 at these shapes, causal and not, hot and sustained.
FA3_BARS = ((Shape(4, 16, 4096, 128, False), 1.00), (Shape(2, 16, 8192, 128, False), 1.00),
            (Shape(1, 16, 16384, 128, False), 1.00), (Shape(4, 16, 4096, 64, False), 0.97),
            (Shape(16, 16, 1024, 128, False), 0.97))
# Target 2: at every models row, hot and sustained, against the fastest peer: 1.00 at head dim 128, 0.97 at 64.
MODEL_BARS = {128: 1.00, 64: 0.97}
# Target 3: sustained, beyond the reference.
BEYOND_SHAPE, BEYOND_BAR = Shape(1, 16, 16384, 128, False), 1.02
# Target 4: hot, no canonical row more than 2 % slower than step 35 (the end's speed over step 35's at least 0.98,
# the point estimate: the issue gives no interval here).
STEP35, CANONICAL_BAR = "longest_first_queue", 0.98


def reference_rows(data: RunData, step: str, peer: str | None = None) -> pd.DataFrame:
    """`step` against `peer` (REFERENCE unless given) at every shape of REFERENCE_SETS the run measured: the burst
    modes everywhere, the sustained mode where the run has it (lab.report.bar.peer_rows: ratio, interval, medians,
    parity)."""
    shapes = [s for name in REFERENCE_SETS for s in shape_set(name)]
    return peer_rows(data, step, peer or REFERENCE, shapes,
                     data.modes + ([SUSTAINED] if data.sustained_shapes else []))


def parity_counts(rows: pd.DataFrame) -> list[tuple[str, int, int]]:
    """(mode, rows at parity, rows) in the rows' mode order."""
    return [(mode, int(rows[rows["mode"] == mode]["parity"].sum()), int((rows["mode"] == mode).sum()))
            for mode in dict.fromkeys(rows["mode"])]


def parity_words(rows: pd.DataFrame) -> str:
    """'k of n rows (hot a of b, cold c of d, ...)' at the bar's parity rule."""
    per_mode = ", ".join(f"{mode} {k} of {n}" for mode, k, n in parity_counts(rows))
    return f"{int(rows['parity'].sum())} of {len(rows)} rows ({per_mode})"


def at_least(ci, r: float) -> bool:
    """Issue 46's "at least r": the point estimate at least r and the interval's lower end above r - 0.01."""
    return ci.ratio >= r and ci.lo > r - TARGET_MARGIN


def _judged(rows: list[tuple[str, object, float]]) -> str:
    """'met at k of n rows' and the misses and the rows not measured, from (label, speedup or None, bar) rows."""
    missed = [f"{what} {fmt_ci(c.ratio, c.lo, c.hi)} (bar {r:.2f})" for what, c, r in rows
              if c is not None and not at_least(c, r)]
    absent = [what for what, c, _ in rows if c is None]
    measured = len(rows) - len(absent)
    text = f"met at {measured - len(missed)} of {len(rows)} rows"
    if missed:
        text += "; missed: " + "; ".join(missed)
    if absent:
        text += "; not measured: " + "; ".join(absent)
    return text


def judged_shapes(data: RunData) -> list[Shape]:
    """The shapes targets 1 and 2 judge: target 1's against FA3, causal and not, then `data`'s models rows."""
    return [Shape(*b.dims, c) for b, _ in FA3_BARS for c in (False, True)] + [
        s for s in data.measured_shapes if model_names(s)]


def row_peer(data: RunData, shape: Shape, mode: str) -> str | None:
    """The peer a judged row compares against: FA3 at target 1's shapes, `data`'s fastest peer at a models row."""
    return data.fastest_peer(shape, mode) if model_names(shape) else REFERENCE


def timed_peers(data: RunData, shape: Shape, mode: str) -> list[str]:
    """The peers `data` timed at `shape` in `mode`: those a fastest-peer row is chosen from."""
    return [i for i in data.peers() if data.lat(i, shape, mode) is not None]


def standing_in(data: RunData, step: str, companions: list[RunData], shape: Shape, mode: str) -> RunData:
    """The run whose row of issue 46's targets 1-3 counts at `shape` and `mode`: the first companion that timed `step`
    there and every peer the row needs (FA3 at the reference shapes, every peer `data` timed there at a models row, so
    that the fastest peer is chosen from no fewer), else `data` itself."""
    needed = timed_peers(data, shape, mode) if model_names(shape) else [REFERENCE]
    return next((c for c in companions
                 if c.lat(step, shape, mode) is not None and all(c.lat(p, shape, mode) is not None for p in needed)),
                data)


def targets(data: RunData, step: str, companions: list[RunData] = ()) -> list[str]:
    """Issue 46's four targets, each a line: where the run meets it, misses it (with the interval) or did not
    measure the row (a missing row is not met). `companions` (companions_refusal): where one of them stands in at a
    shape and mode (standing_in), its row of targets 1-3 counts instead of the run's; target 4 (against step 35)
    stays the run's."""
    def src(sh: Shape, mode: str) -> RunData:
        return standing_in(data, step, companions, sh, mode)

    t1 = [(f"{shape_label(sh)} {mode}", src(sh, mode).speedup(step, REFERENCE, sh, mode), r)
          for base, r in FA3_BARS for sh in (base, Shape(*base.dims, True)) for mode in TARGET_MODES]
    t2 = []
    for sh in [s for s in data.measured_shapes if model_names(s)]:
        for mode in TARGET_MODES:
            peer = row_peer(src(sh, mode), sh, mode)
            t2.append((f"{sh.tuple_label} {mode}" + (f" against {peer}" if peer else ""),
                       src(sh, mode).speedup(step, peer, sh, mode) if peer else None, MODEL_BARS[sh.D]))
    t3 = [(f"{shape_label(BEYOND_SHAPE)} {SUSTAINED}",
           src(BEYOND_SHAPE, SUSTAINED).speedup(step, REFERENCE, BEYOND_SHAPE, SUSTAINED), BEYOND_BAR)]
    slow = []
    canonical = [s for s in shape_set("canonical") if s in set(data.measured_shapes)]
    for sh in canonical:
        c = data.speedup(step, STEP35, sh, HOT)
        if c is not None and c.ratio < CANONICAL_BAR:
            slow.append(f"{shape_label(sh)} {fmt_ci(c.ratio, c.lo, c.hi)}")
    timed = [s for s in canonical if data.speedup(step, STEP35, s, HOT) is not None]
    t4 = ("not measured (no canonical row of both)" if not timed else
          f"met at {len(timed)} of {len(timed)} rows" if not slow else
          f"missed at {len(slow)} of {len(timed)} rows: " + "; ".join(slow))
    bars = ", ".join(f"{shape_label(b).replace(' non-causal', '')} {r:.2f}×" for b, r in FA3_BARS)
    return [f"- Target 1 (against {REFERENCE}, causal and not, hot and sustained, at least: {bars}): "
            f"{_judged(t1)}.",
            f"- Target 2 (every models row, hot and sustained, against the fastest peer the mode timed: at least "
            f"{MODEL_BARS[128]:.2f}× at head dim 128, {MODEL_BARS[64]:.2f}× at 64): "
            + (f"{_judged(t2)}." if t2 else "not measured (the run has no models rows)."),
            f"- Target 3 (sustained, at least {BEYOND_BAR:.2f}× {REFERENCE}): {_judged(t3)}.",
            f"- Target 4 (hot, the canonical rows at least {CANONICAL_BAR:.2f}× the speed of step 35, "
            f"{STEP35}): {t4}."]


class CompanionRefused(ValueError):
    """A run named to stand in for a report's rows of some modes that cannot (companion_refusal says why)."""


def companion_refusal(data: RunData, companion: RunData) -> str | None:
    """Why `companion` cannot stand in for `data`'s rows (None where it can): it must be another run, on the same GPU
    model, with hot or sustained samples of `data`'s arch-specific end."""
    step = branches.arch_specific_end(data)
    gpu, other = data.env.get("gpu"), companion.env.get("gpu")
    if companion.rec.dir.resolve() == data.rec.dir.resolve():
        return f"{companion.run_id} is the run itself"
    if not gpu or gpu != other:
        return f"{companion.run_id} ran on {other or 'an unrecorded GPU'}, the run on {gpu or 'an unrecorded GPU'}: " \
               "a companion must be the same GPU model"
    if not companion_modes(companion):
        return f"{companion.run_id} has no hot or sustained samples"
    if not step:
        return f"{data.run_id} timed no arch-specific step: a companion has no rows to stand in for"
    if step not in companion.impls():
        return f"{companion.run_id} has no samples of {step}, the run's arch-specific end"
    return None


def companions_refusal(data: RunData, companions: list[RunData], base: RunData | None = None) -> str | None:
    """companion_refusal of each against the run it stands in for (companion_of: the run, or a base of another GPU
    model), then: no two companions may time that run's end at the same shape and mode (which would stand in would be
    a choice), nor may one be named twice."""
    for c in companions:
        target = companion_of(data, base, c)
        if why := companion_refusal(target, c):
            if target is base:
                why = why.replace("is the run itself", "is the report's base itself")
            elif base_on_another_gpu(data, base):
                why = why.replace(": a companion must be the same GPU model", f" and its base on {base.env['gpu']}: "
                                  "a companion must be the run's GPU model or its base's")
            return why
    for target in (data, *([base] if base is not None else [])):
        step, seen = branches.arch_specific_end(target), {}
        for c in companions_for(target, data, base, companions):
            for sh in c.measured_shapes:
                for mode in companion_modes(c):
                    if c.lat(step, sh, mode) is None:
                        continue
                    if (sh, mode) in seen:
                        return (f"{seen[sh, mode]} and {c.run_id} both timed {step} at {shape_label(sh)} {mode}: "
                                "name one companion a row")
                    seen[sh, mode] = c.run_id
    return None


def _precision(data: RunData, modes: list[str]) -> str:
    """How a run measured `modes`: its replicates, and a hot row's time cap or a sustained row's turns."""
    words = [f"{data.replicates} replicates"]
    if HOT in modes:
        words.append(f"a {data.run_params.cap_s:g} s cap a hot row")
    if SUSTAINED in modes:
        words.append(f"{data.run_params.sustained_turns} turns a sustained row")
    return ", ".join(words)


def _where(data: RunData, companion: RunData) -> str:
    boards = [{g.get("gpu_uuid") for g in d.replicate_gpus.values()} - {None} for d in (data, companion)]
    return ("the same board" if boards[0] and boards[0] == boards[1] else
            "another board of that model" if boards[0] and boards[1] and not boards[0] & boards[1] else
            "the same GPU model")


def companions_block(data: RunData, step: str, companions: list[RunData]) -> list[str]:
    """The targets again with the companions' rows where they stand in (standing_in), and each such row in the run and
    in its companion side by side (a reader sees what the more precise run changed)."""
    said = []
    for c in companions:
        modes = companion_modes(c)
        alone = "that mode alone" if len(modes) == 1 else "those modes alone"
        said.append(f"the {companion_words(c)} rows of run {c.run_id} ({alone} on {_where(data, c)}: "
                    f"{_precision(c, modes)}; this run: {_precision(data, modes)})")
    out = [f"**With {' and '.join(said)}.** A companion's row of targets 1-3 stands in for this run's where it timed "
           "the end and the peers the row needs (FA3, or at a models row every peer this run timed there); the others "
           "stay this run's.", ""]
    out += targets(data, step, companions=companions)
    table = []
    for mode in TARGET_MODES:
        for sh in judged_shapes(data):
            c = standing_in(data, step, companions, sh, mode)
            if c is data:  # no companion stands in: the run's row counts, as above
                continue
            peer = row_peer(c, sh, mode)
            own, other = (d.speedup(step, peer, sh, mode) if peer else None for d in (data, c))
            table.append([shape_label(sh), mode, peer or "-", fmt_ci(own.ratio, own.lo, own.hi) if own else "-",
                          fmt_ci(other.ratio, other.lo, other.hi) if other else "-", c.run_id])
    if table:
        out += ["", md_table(["shape", "mode", "against", f"run {data.run_id}", "companion", "companion run"],
                             table, "lllrrl")]
    return out


def _extreme(rows: pd.DataFrame, lowest: bool) -> str:
    r = rows.sort_values("ratio", ascending=lowest, kind="stable").iloc[0]
    return f"{shape_label(r['shape'])} {r['mode']}, {fmt_ci(r['ratio'], r['lo'], r['hi'])}"


def end_rows(data: RunData) -> tuple[str, pd.DataFrame]:
    """The run's arch-specific end and its reference rows (none where either is missing)."""
    step = branches.arch_specific_end(data)
    return step, reference_rows(data, step) if step else pd.DataFrame()


def section_reference(ctx: Context) -> list[str]:
    data = ctx.data
    step, rows = end_rows(data)
    if not len(rows):
        return []
    out = ["## Against FlashAttention-3", "",
           f"FlashAttention-3 ({REFERENCE}: its own compiled forward kernels; which build, in \"Environment\") is the "
           f"field's reference Hopper kernel. {step} ({branches.role(data, step)}) against it at every shape of the "
           f"{', '.join(REFERENCE_SETS[:-1])} and {REFERENCE_SETS[-1]} sets this run measured (`lab.studies.shapes`), "
           "in each burst mode and, where the run has it, sustained; speedups are "
           f"{data.speedup_words()}, > 1: {step} faster. Parity as in the bar: at least {BAR_PARITY:.1f}× with the "
           f"95 % interval's lower end above {BAR_PARITY_LO}. The models set's rows against it are in \"The "
           "attention real models run\".", ""]
    table = [[shape_label(r.shape), r.mode, fmt_us(r.step_us), fmt_us(r.peer_us), fmt_ci(r.ratio, r.lo, r.hi),
              row_level(r)] for r in rows.itertuples()]
    out += [md_table(["shape", "mode", f"{step} µs", f"{REFERENCE} µs", f"{step} vs {REFERENCE} [95% CI]",
                      "this row"], table, "llrrrl"), ""]
    out.append(f"- At parity or above: {parity_words(rows)}.")
    out.append(f"- Furthest behind: {_extreme(rows, lowest=True)}; furthest ahead: {_extreme(rows, lowest=False)}.")
    out += ["", f"**Issue 46's targets on this GPU** ({data.env.get('gpu', 'its GPU')}; the issue judges them on an "
            "H100 and an H200). At least r: the speedup's point estimate at least r and its 95 % interval's lower end "
            f"above r - {TARGET_MARGIN:g}; a row the run did not measure is not met.", ""]
    out += targets(data, step)
    own = companions_for(data, data, ctx.base, ctx.companions)
    if own:
        out += [""] + companions_block(data, step, own)
    other = ctx.base
    if base_on_another_gpu(data, other):
        other_step = branches.arch_specific_end(other)  # that run's own end: it may be an earlier step
        if other_step:
            out += ["", f"**On the other GPU** ({other.env['gpu']}: run {other.run_id}, the run this report is "
                    f"replicated against, its end {other_step}"
                    + ("" if other_step == step else f", not {step}") + ").", ""]
            out += targets(other, other_step)
            theirs = companions_for(other, data, other, ctx.companions)
            if theirs:
                out += [""] + companions_block(other, other_step, theirs)
    return out + [""]


def rows_standing_in(data: RunData, step: str, rows: pd.DataFrame, companions: list[RunData]) -> pd.DataFrame:
    """`rows` (reference_rows of `step`) with each row that a companion stands in for (standing_in) taken from that
    companion, its parity by the bar's rule (at_parity), and the run that gave each row (`run`)."""
    out = []
    for r in rows.to_dict("records"):
        c = standing_in(data, step, companions, r["shape"], r["mode"])
        if c is not data:
            s = c.speedup(step, REFERENCE, r["shape"], r["mode"])
            r = {**r, "ratio": s.ratio, "lo": s.lo, "hi": s.hi, "parity": at_parity(s.ratio, s.lo)}
        out.append({**r, "run": c.run_id})
    return pd.DataFrame(out)


def first_screen_line(data: RunData, companions: list[RunData] = ()) -> str:
    """One bold sentence for the top of the report: the parity count against FA3 ('' where the section is absent),
    and again with the rows that `companions` of the run (companion_of) stand in for, where they stand in for any."""
    step, rows = end_rows(data)
    if not len(rows):
        return ""
    text = parity_words(rows)
    if companions:
        stood = rows_standing_in(data, step, rows, companions)
        named = [c for c in companions if c.run_id in set(stood["run"])]
        if named:
            runs = " and ".join(f"the {companion_words(c)} rows of run {c.run_id}" for c in named)
            text += f"; with {runs} where they stand in, {parity_words(stood)}"
    return (f"**Against FlashAttention-3: at parity or above at {text}** ({step} against {REFERENCE} at the "
            "canonical, large and long shapes: \"Against FlashAttention-3\").")
