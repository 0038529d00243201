"""The profiler's findings: the steps whose metrics moved most against their parents, and the best step
against the fastest SDPA kernel profiled (their counters side by side)."""

from __future__ import annotations

import math

import pandas as pd

from lab.kernels.shape import Shape
from lab.measure.ncu_metrics import HYPOTHESIS_METRICS
from lab.report import branches
from lab.report.formats import FINDING_METRICS, isnum, fmt, fmt_ci, fmt_g
from lab.report.load import RunData, number_or_none
from lab.report.tables import rel_change


# lab.kernels.manifest.METRICS (a hypothesis's metric) -> the FINDING_METRICS column that shows it best:
# the profile column of lab.measure.ncu_metrics.HYPOTHESIS_METRICS, bank conflicts as a share, not a count
FINDING_FOR_HYPOTHESIS = {**HYPOTHESIS_METRICS, "shared_bank_conflicts": "bank_conflict_pct"}


def _move_text(label, unit, a, b) -> str:
    how = "rose" if b > a else "fell" if b < a else "stayed"
    rel = rel_change(a, b)
    if rel is None or not math.isfinite(rel):
        rel_txt = ""
    elif rel >= 9:
        rel_txt = f" (×{b / a:.0f})"
    else:
        rel_txt = f" ({rel * 100:+.1f} %)"
    unit_txt = f" {unit}" if unit else ""
    return f"{label} {how} from {fmt_g(a)} to {fmt_g(b)}{unit_txt}{rel_txt}"


def step_moves(data: RunData, parent: str, variant: str, pshape: Shape) -> list[tuple]:
    """(score, column, label, unit, parent value, step value) for the tracked metrics, largest
    relative move first; score = |ln((new + floor) / (old + floor))|."""
    old, new = data.profile_row(parent, pshape), data.profile_row(variant, pshape)
    if old is None or new is None:
        return []
    moves = []
    for col, label, unit, floor in FINDING_METRICS:
        a, b = number_or_none(old.get(col)), number_or_none(new.get(col))
        if a is not None and b is not None:
            moves.append((abs(math.log((b + floor) / (a + floor))), col, label, unit, a, b))
    return sorted(moves, key=lambda m: (-m[0], m[1]))


def profiler_findings(data: RunData, abl: pd.DataFrame, n: int = 3) -> list[str]:
    """The steps with the largest profiler moves against their parents (their two largest, the
    hypothesis metric first when it is one of them), then the best step against the fastest
    profiled SDPA kernel; all at the profiled shape standing for the headline shape."""
    head = data.headline()
    pshape = data.profile_shape_for(head) if head else None
    if pshape is None:
        return []
    steps = []
    for r in abl.itertuples():
        if not r.parent:
            continue
        moves = step_moves(data, r.parent, r.variant, pshape)
        if moves:
            steps.append((moves[0][0], r, moves))
    steps.sort(key=lambda t: -t[0])
    sdpa = sdpa_gap(data, abl, pshape)
    findings = []
    for _, r, moves in steps[: n - 1 if sdpa else n]:
        top = moves[:2]
        want = FINDING_FOR_HYPOTHESIS.get(r.metric)
        top.sort(key=lambda m: m[1] != want)  # the predicted mechanism first, when it is among them
        text = "; ".join(_move_text(m[2], m[3], m[4], m[5]) for m in top if m[0] > 0)
        speed = (f" The step ran {fmt_ci(r.vs_parent, r.vs_parent_lo, r.vs_parent_hi)} against its parent "
                 f"({r.speed_verdict})." if isnum(r.vs_parent) else "")
        findings.append(f"**{r.title}** ({r.parent} → {r.variant}): {text}.{speed}")
    if sdpa:
        findings.append(sdpa)
    return findings


def sdpa_gap(data: RunData, abl: pd.DataFrame, pshape: Shape) -> str | None:
    """The best step of `abl` (branches.best_step; else its last profiled row) against the fastest
    SDPA kernel profiled at pshape."""
    profiled = [r for r in abl.itertuples() if data.profile_row(r.variant, pshape)]
    best = branches.best_step(data)
    last = next((r for r in profiled if r.variant == best), profiled[-1] if profiled else None)
    peers = [i for i in data.profile["impl"].unique() if str(i).startswith("sdpa_")] if data.profile is not None else []
    prows = {p: data.profile_row(p, pshape) for p in sorted(peers)}
    prows = {p: r for p, r in prows.items() if r and isnum(r.get("duration_us"))}
    if last is None or not prows:
        return None
    mine = data.profile_row(last.variant, pshape)
    fastest = min(prows, key=lambda p: (prows[p]["duration_us"], p))
    peer = prows[fastest]
    others = ", ".join(f"{p} {fmt_g(r.get('tensor_pipe_active'))} %" for p, r in prows.items() if p != fastest)
    parts = [f"**{last.title}** ({last.variant}) against SDPA: tensor pipe active "
             f"{fmt_g(mine.get('tensor_pipe_active'))} %"
             f" of peak vs {fmt_g(peer.get('tensor_pipe_active'))} % for {fastest}"
             + (f" ({others})" if others else "")]
    if isnum(mine.get("duration_us")):
        parts.append(f"its kernel takes {mine['duration_us'] / peer['duration_us']:.2f}× as long under ncu "
                     f"({fmt(mine['duration_us'], 1)} µs vs {fmt(peer['duration_us'], 1)} µs)")
    stalls_m, stalls_p = _top_stall(mine), _top_stall(peer)
    if stalls_m:
        parts.append(f"its top stall is {stalls_m[0]} ({fmt_g(stalls_m[1])} warps per issue)"
                     + (f" where {fastest}'s is {stalls_p[0]} ({fmt_g(stalls_p[1])})" if stalls_p else ""))
    bank = (mine.get("bank_conflict_pct"), peer.get("bank_conflict_pct"))
    if all(isnum(b) for b in bank):
        parts.append(f"bank conflicts {fmt_g(bank[0])} % vs {fmt_g(bank[1])} %")
    occ = (mine.get("achieved_occupancy"), peer.get("achieved_occupancy"))
    if all(isnum(o) for o in occ):
        parts.append(f"achieved occupancy {fmt_g(occ[0])} % vs {fmt_g(occ[1])} %")
    return "; ".join(parts) + "."


def stall_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c.startswith("stall_") and c != "stall_selected"]


def _top_stall(row: dict | None):
    if not row:
        return None
    vals = [(c[len("stall_"):], row[c]) for c in row if c.startswith("stall_") and c != "stall_selected"
            and isnum(row[c])]
    return max(vals, key=lambda cv: cv[1]) if vals else None
