"""The bar: the best step against the fastest SDPA backend at every canonical, large and long shape
(the success criteria), and the portable branch's end against FlashAttention-2 (sdpa_flash)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from lab.kernels.shape import Shape
from lab.measure import stats
from lab.report import branches
from lab.report.formats import PEER, fmt_ci, fmt_g, fmt_us, md_table, shape_label
from lab.report.load import RunData, number_or_none, step_title, manifest_variant
from lab.report.findings import sdpa_gap
from lab.studies.shapes import HEADLINE_D128, shape_set

# The bar (issues 5 and 10): the best step (bar_step) against the FASTEST SDPA backend measured in the same run at
# each shape (cuDNN on H100/H200), with SDPA's FlashAttention-2 backend (sdpa_flash) shown beside it.
BAR_CANONICAL = [Shape(1, 8, 512, 64, False), Shape(4, 16, 512, 64, False), Shape(8, 16, 512, 64, False)]
BAR_LARGE = shape_set("large")
BAR_LONG = shape_set("long")  # in the bar when the run has them
BAR_FAST, BAR_FAST_LO = 1.10, 1.05  # two of the three canonical non-causal shapes: median ratio, lower CI end
BAR_PARITY, BAR_PARITY_LO = 1.0, 0.99  # every canonical, large and long shape: median ratio, lower CI end
BAR_TFLOPS = {Shape(1, 16, 16384, 128, False): 620.0, Shape(4, 16, 4096, 128, False): 600.0,
              Shape(4, 16, 4096, 64, False): 490.0}  # hot-mode TFLOP/s the best step must reach there
BAR_TENSOR_PIPE = 50.0  # % at the large shapes
BAR_BANK_CONFLICTS = 1.0  # % of shared wavefronts, at most (exclusive)


def canonical_words() -> str:
    """The bar's canonical shapes by name: three of the canonical set's seven (lab.studies.shapes)."""
    named = [f"({s.B}, {s.H}, {s.S}, {s.D})" for s in BAR_CANONICAL]
    return f"the bar's three canonical shapes ({', '.join(named[:-1])} and {named[-1]})"


def bar_rule() -> str:
    """The bar in words, from the constants above."""
    tfl = ", ".join(f"{v:g} at {shape_label(s)}" for s, v in BAR_TFLOPS.items())
    return (f"Against the fastest SDPA backend measured at each shape and mode: at least {BAR_PARITY:.1f}× (95 % "
            f"interval's lower end above {BAR_PARITY_LO:.2f}) at {canonical_words()}, at the large and (where "
            f"measured) the long shapes, causal and not; at least {BAR_FAST:.2f}× (lower end above {BAR_FAST_LO:.2f}) "
            f"at two of those three canonical shapes, non-causal; hot-mode TFLOP/s of at least {tfl}; the profile at the large "
            f"shapes: no spills, bank conflicts under {BAR_BANK_CONFLICTS:g} %, tensor pipe active at least "
            f"{BAR_TENSOR_PIPE:g} %.")


def bar_shapes(data: RunData) -> list[Shape]:
    """The bar's shapes this run measured: canonical (causal and not), large, then long."""
    canon = [Shape(s.B, s.H, s.S, s.D, c) for c in (False, True) for s in BAR_CANONICAL]
    have = set(data.measured_shapes)
    return [s for s in dict.fromkeys(canon + BAR_LARGE + BAR_LONG) if s in have]


def _grid_note(data: RunData, impl: str, shape: Shape) -> str:
    """CTAs and waves of impl at shape, from its launch shape and the resident CTAs per SM that
    ncu measured for it at the profiled stand-in. A kernel whose profiled grid was one wave holding
    fewer CTAs than work tiles is persistent: its CTAs walk the tiles. A persistent kernel's profile
    stands only for its own grid (the same shape, causal or not): step 33 and later choose their
    tile and CTAs per SM by the number of work tiles (three CTAs an SM from ten work tiles an SM),
    so a stand-in with another batch or head count may have launched another tile; then no note.
    A grid of one CTA per tile keeps its tile whatever B and H are."""
    launch = (data.build.get(impl) or {}).get("launch", {}).get(str(shape.D), {})
    rows = launch.get("rows_per_block")
    pshape = data.profile_shape_for(shape)
    prow = data.profile_row(impl, pshape)
    sms = number_or_none((prow or {}).get("sm_count")) or number_or_none(data.env.get("sm_count"))
    if not rows or not prow or not sms:
        return ""
    grid_p, waves_p = number_or_none(prow.get("grid_size")), number_or_none(prow.get("waves"))
    if not grid_p or not waves_p:
        return ""
    per_sm = round(grid_p / (waves_p * sms))
    tiles = lambda s: -(-s.S // rows) * s.B * s.H  # noqa: E731 - work tiles (CTAs of a one-tile-a-CTA grid)
    ctas = tiles(shape)
    if grid_p < tiles(pshape) and waves_p <= 1.0 + 1e-6:
        if dataclasses.replace(pshape, causal=shape.causal) != shape:
            return ""
        grid = int(min(ctas, per_sm * sms))
        return (f"persistent: {grid} CTAs, {per_sm} per SM, walk {ctas} work tiles of {rows} rows, "
                f"{ctas / grid:.2f} a CTA")
    return f"{ctas} CTAs of {rows} rows, {per_sm} per SM: {ctas / (per_sm * sms):.2f} waves"


def bar_step(data: RunData) -> str:
    """The step the bar judges: the run's best step (branches.best_step), the end of the sm_90a
    branch where the GPU ran it, else the best portable step ('' if no step was timed). Not the
    last step in manifest order: portable steps appended after the sm_90a ones come last there."""
    return branches.best_step(data)


def _p90(data: RunData, impl: str, shape: Shape, mode: str):
    x = data.lat(impl, shape, mode)
    return float(np.percentile(x, 90)) if x is not None and len(x) else None


def bar_rows(data: RunData, best: str, peer: str = PEER) -> pd.DataFrame:
    """One row per bar shape and mode: best against the fastest SDPA backend there (the verdict) and
    against `peer` (sdpa_flash, shown as before)."""
    rows = []
    for sh in bar_shapes(data):
        for mode in data.modes:
            fast = data.fastest_sdpa(sh, mode)
            c = data.speedup(best, fast, sh, mode) if fast else None
            if c is None:
                continue
            f = data.speedup(best, peer, sh, mode)
            rows.append(dict(shape=sh, mode=mode, fastest=fast, ratio=c.ratio, lo=c.lo, hi=c.hi,
                             parity=at_parity(c.ratio, c.lo),
                             fast=bool(c.ratio >= BAR_FAST and c.lo > BAR_FAST_LO),
                             flash=f, best_us=data.median(best, sh, mode), fastest_us=data.median(fast, sh, mode),
                             peer_us=data.median(peer, sh, mode)))
    return pd.DataFrame(rows)


def at_parity(ratio: float, lo: float) -> bool:
    """The bar's parity: the point estimate at least BAR_PARITY and the interval's lower end above BAR_PARITY_LO."""
    return bool(ratio >= BAR_PARITY and lo > BAR_PARITY_LO)


def row_level(r) -> str:
    """Where a bar row (ratio, parity, fast) stands against the bar's parity and 1.10x rules."""
    return (f"≥ {BAR_FAST:.2f}×" if r.fast else f"≥ {BAR_PARITY:.1f}×" if r.parity
            else f"below {BAR_PARITY:.1f}×" if r.ratio < BAR_PARITY else f"lower end ≤ {BAR_PARITY_LO}")


def _local_bytes(row: dict):
    """A profile row's local-memory (spill) traffic in bytes (older runs record loads and stores apart)."""
    local = number_or_none(row.get("local_bytes"))
    return local if local is not None else (number_or_none(row.get("local_bytes_ld")) or 0) + (number_or_none(row.get("local_bytes_st")) or 0)


def _bar_table(data: RunData, best: str, peer: str, rows: pd.DataFrame) -> str:
    out = []
    for r in rows.itertuples():
        f = r.flash
        level = row_level(r)
        out.append([shape_label(r.shape), r.mode, fmt_us(r.best_us), r.fastest, fmt_us(r.fastest_us),
                    fmt_ci(r.ratio, r.lo, r.hi), fmt_us(r.peer_us),
                    fmt_ci(f.ratio, f.lo, f.hi) if f is not None else "—",
                    f"{fmt_us(_p90(data, best, r.shape, r.mode))} / {fmt_us(_p90(data, r.fastest, r.shape, r.mode))}",
                    level])
    return md_table(["shape", "mode", f"{best} µs", "fastest SDPA", "its µs", f"{best} vs fastest [95% CI]",
                     f"{peer} µs", f"{best} vs {peer} [95% CI]", f"p90 µs ({best} / fastest)", "this row"], out,
                    "llrlrrrrrr")


def bar_verdicts(data: RunData, best: str, rows: pd.DataFrame) -> list[tuple]:
    """(label, met, why, shapes) for each part of the bar that this run can judge."""
    verdicts = []
    for r in rows.itertuples():
        verdicts.append((f"{shape_label(r.shape)}, {r.mode}, vs {r.fastest}", r.parity,
                         f"{fmt_ci(r.ratio, r.lo, r.hi)}", [r.shape]))
    canon = {Shape(s.B, s.H, s.S, s.D, False) for s in BAR_CANONICAL}
    for mode in data.modes:
        sel = rows[(rows["mode"] == mode) & rows["shape"].isin(canon)] if len(rows) else rows
        if len(sel) == len(canon):
            n = int(sel["fast"].sum())
            verdicts.append((f"canonical non-causal, {mode}: ≥ {BAR_FAST:.2f}× on two of three", n >= 2,
                             f"{n} of 3 at ≥ {BAR_FAST}× with the lower end above {BAR_FAST_LO}",
                             list(sel["shape"])))
    for sh, target in BAR_TFLOPS.items():
        med = data.median(best, sh, "hot")
        if med is None:
            continue
        tf = stats.tflops(sh.B, sh.H, sh.S, sh.D, sh.causal, med)
        verdicts.append((f"TFLOP/s at {shape_label(sh)}, hot: ≥ {target:g}", tf >= target,
                         f"{tf:.1f} TFLOP/s measured ({'met' if tf >= target else 'missed'})", [sh]))
    return verdicts


def bar_tflops_lines(data: RunData, best: str) -> list[str]:
    """Each TFLOP/s target as met/missed with the measured value, or 'not measured in this run'."""
    out = []
    for sh, target in BAR_TFLOPS.items():
        med = data.median(best, sh, "hot")
        if med is None:
            out.append(f"- {shape_label(sh)}: ≥ {target:g} TFLOP/s: not measured in this run.")
            continue
        tf = stats.tflops(sh.B, sh.H, sh.S, sh.D, sh.causal, med)
        out.append(f"- {shape_label(sh)}: ≥ {target:g} TFLOP/s: **{'met' if tf >= target else 'missed'}**, "
                   f"{tf:.1f} TFLOP/s ({fmt_us(med)} µs, hot median).")
    return out + [""]


def _profile_verdicts(data: RunData, best: str) -> tuple[list[str], list[tuple]]:
    """The best step's profile at the large shapes against the bar's profile limits."""
    lines, verdicts = [], []
    for sh in dict.fromkeys(Shape(s.B, s.H, s.S, s.D, False) for s in BAR_LARGE):
        pshape = data.profile_shape_for(sh)
        r = data.profile_row(best, pshape)
        if not r:
            continue
        local = _local_bytes(r)
        bank, pipe = number_or_none(r.get("bank_conflict_pct")), number_or_none(r.get("tensor_pipe_active"))
        ok = local == 0 and bank is not None and bank < BAR_BANK_CONFLICTS and pipe is not None and pipe >= BAR_TENSOR_PIPE
        lines.append(f"{shape_label(pshape)}: local-memory (spill) traffic {fmt_g(local)} bytes, bank conflicts "
                     f"{fmt_g(bank)} % of shared wavefronts, tensor pipe active {fmt_g(pipe)} % "
                     f"({'meets' if ok else 'misses'} 0 spills, < {BAR_BANK_CONFLICTS:g} % conflicts, "
                     f"≥ {BAR_TENSOR_PIPE:g} % tensor pipe)")
        verdicts.append((f"profile at {shape_label(pshape)}", ok, lines[-1].split(": ", 1)[1], [sh]))
    return lines, verdicts


def _missed_lines(data: RunData, best: str, missed: list[tuple]) -> list[str]:
    """Each missed part with the launch shape, then what the profiler says where SDPA is ahead."""
    out, gaps = [], {}
    for label, _, why, shapes in missed:
        if label.startswith(("TFLOP/s", "profile")):
            pshape = data.profile_shape_for(Shape(shapes[0].B, shapes[0].H, shapes[0].S, shapes[0].D, False))
            if pshape is not None and pshape not in gaps:
                title = step_title(manifest_variant(best)) if manifest_variant(best) else best
                gaps[pshape] = sdpa_gap(data, pd.DataFrame([{"variant": best, "title": title}]), pshape)
            out.append(f"- {label}: {why}.")
            continue
        grid = "; ".join(f"{shape_label(sh)}: {g}" for sh in shapes if (g := _grid_note(data, best, sh)))
        out.append(f"- {label}: {why}" + (f" (launch: {grid})" if grid else "") + ".")
    if missed:
        out.append("")
    for pshape, gap in gaps.items():
        if gap:
            out += [f"At {shape_label(pshape)}, " + gap[0].lower() + gap[1:], ""]
    return out


def bar_parts(data: RunData, best: str, peer: str = PEER) -> tuple[pd.DataFrame, list[tuple], list[str]]:
    """(the bar's rows, every part's verdict (label, met, why, shapes), the profile's lines) for `best`."""
    rows = bar_rows(data, best, peer) if best else pd.DataFrame()
    if not len(rows):
        return rows, [], []
    prof_lines, prof_verdicts = _profile_verdicts(data, best)
    return rows, bar_verdicts(data, best, rows) + prof_verdicts, prof_lines


def bar_count(data: RunData, best: str, peer: str = PEER) -> tuple[int, int]:
    """(parts met, parts) of the bar for `best`: the verdict the report's first screen states."""
    _, verdicts, _ = bar_parts(data, best, peer)
    return sum(bool(v[1]) for v in verdicts), len(verdicts)


def success_bar(data: RunData, best: str, peer: str = PEER) -> list[str]:
    """Markdown lines: the bar, row by row, with the verdict and (where missed) the profiler's view."""
    rows, verdicts, prof_lines = bar_parts(data, best, peer)
    if not len(rows):
        return []
    out = [_bar_table(data, best, peer, rows), "", "TFLOP/s targets (hot):", ""] + bar_tflops_lines(data, best)
    if prof_lines:
        out += ["Profile of " + best + ": " + "; ".join(prof_lines) + ".", ""]
    missed = [v for v in verdicts if not v[1]]
    out += [f"**Verdict:** {len(verdicts) - len(missed)} of {len(verdicts)} parts of the bar met."
            + (" Missed:" if missed else " All met."), ""]
    return out + _missed_lines(data, best, missed)


# --- The portable branch against FlashAttention-2 (issue 11) -------------------------------------
# On every GPU without sm_90a the study ends on the portable branch, and there the kernel a user would
# otherwise pick is FlashAttention-2 (SDPA's flash backend, the same mma.sync/ldmatrix/cp.async
# instruction set). The portable end is judged against it with the bar's parity and 1.10x rules; its
# profile at (4, 16, 4096, 128) against sdpa_flash's own tensor-pipe activity.
PORTABLE_PROFILE_SHAPE = HEADLINE_D128


def peer_rows(data: RunData, step: str, peer: str, shapes: list[Shape], modes: list[str]) -> pd.DataFrame:
    """One row per shape of `shapes` the run measured and mode of `modes` where both rows were timed: `step`
    against `peer`, with the bar's parity and 1.10x verdicts."""
    rows = []
    for sh in [s for s in dict.fromkeys(shapes) if s in set(data.measured_shapes)]:
        for mode in modes:
            c = data.speedup(step, peer, sh, mode)
            if c is None:
                continue
            rows.append(dict(shape=sh, mode=mode, ratio=c.ratio, lo=c.lo, hi=c.hi,
                             step_us=data.median(step, sh, mode), peer_us=data.median(peer, sh, mode),
                             parity=at_parity(c.ratio, c.lo),
                             fast=bool(c.ratio >= BAR_FAST and c.lo > BAR_FAST_LO)))
    return pd.DataFrame(rows)


def portable_bar_rows(data: RunData, step: str, peer: str = PEER) -> pd.DataFrame:
    """One row per canonical and large shape (lab.studies.shapes' sets) and mode: `step` against `peer`."""
    return peer_rows(data, step, peer, shape_set("canonical") + shape_set("large"), data.modes)


def portable_bar(data: RunData, step: str, peer: str = PEER) -> list[str]:
    """Markdown lines: the portable step against `peer` shape by shape, the parity and 1.10x counts,
    and its profile beside the peer's at PORTABLE_PROFILE_SHAPE ([] when the run lacks either)."""
    rows = portable_bar_rows(data, step, peer) if step else pd.DataFrame()
    if not len(rows):
        return []
    table = [[shape_label(r.shape), r.mode, fmt_us(r.step_us), fmt_us(r.peer_us), fmt_ci(r.ratio, r.lo, r.hi),
              row_level(r)] for r in rows.itertuples()]
    out = [md_table(["shape", "mode", f"{step} µs", f"{peer} µs", f"{step} vs {peer} [95% CI]", "this row"], table,
                    "llrrrl"), ""]
    canon = {Shape(s.B, s.H, s.S, s.D, False) for s in BAR_CANONICAL}
    fast = {mode: int(rows[(rows["mode"] == mode) & rows["shape"].isin(canon)]["fast"].sum()) for mode in data.modes}
    out.append(f"- Parity (≥ {BAR_PARITY:.1f}×, lower end above {BAR_PARITY_LO}): {int(rows['parity'].sum())} of "
               f"{len(rows)} rows; ≥ {BAR_FAST:.2f}× (lower end above {BAR_FAST_LO}) at {canonical_words()}, "
               "non-causal: " + ", ".join(f"{n} of 3 {mode}" for mode, n in fast.items()) + ".")
    if profile := portable_profile(data, step, peer):
        out.append(f"- {profile}")
    return out + [""]


def portable_profile(data: RunData, step: str, peer: str = PEER) -> str:
    """The portable step's profile beside the peer's at PORTABLE_PROFILE_SHAPE, in a sentence ('' when
    the run lacks either)."""
    r, p = data.profile_row(step, PORTABLE_PROFILE_SHAPE), data.profile_row(peer, PORTABLE_PROFILE_SHAPE)
    if not (r and p):
        return ""
    return (f"Profile at {shape_label(PORTABLE_PROFILE_SHAPE)}: local-memory (spill) traffic {fmt_g(_local_bytes(r))} "
            f"bytes, bank conflicts {fmt_g(number_or_none(r.get('bank_conflict_pct')))} % of shared wavefronts, "
            f"tensor pipe active {fmt_g(number_or_none(r.get('tensor_pipe_active')))} % against {peer}'s "
            f"{fmt_g(number_or_none(p.get('tensor_pipe_active')))} % (its spill traffic: {fmt_g(_local_bytes(p))} bytes).")
