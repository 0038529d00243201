"""Against FlashAttention-3: the end of the sm_90a branch against flash_attn3 (FlashAttention-3's own compiled forward
kernels, the field's reference Hopper kernel) at every shape of the canonical, large and long sets the run measured,
in each burst mode and, at the sustained shapes, sustained; with the bar's parity rule. The models set's rows against
it are in "The attention real models run". Absent where the run has no flash_attn3 or no arch-specific step (FA3
runs on Hopper only, and "Not measured in this run" says why it is missing)."""

from __future__ import annotations

import pandas as pd

from lab.report import branches
from lab.report.bar import BAR_PARITY, BAR_PARITY_LO, peer_rows, row_level
from lab.report.context import Context
from lab.report.formats import fmt_ci, fmt_us, md_table, shape_label
from lab.report.load import SUSTAINED, RunData
from lab.studies.shapes import shape_set

REFERENCE = "flash_attn3"
REFERENCE_SETS = ("canonical", "large", "long")


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
    return out + [""]


def first_screen_line(data: RunData) -> str:
    """One bold sentence for the top of the report: the parity count against FA3 ('' where the section is absent)."""
    step, rows = end_rows(data)
    if not len(rows):
        return ""
    return (f"**Against FlashAttention-3: at parity or above at {parity_words(rows)}** ({step} against "
            f"{REFERENCE} at the canonical, large and long shapes: \"Against FlashAttention-3\").")
