from __future__ import annotations

from lab.run import Shape
import numpy as np
import pandas as pd

from lab.report.common import PEER, fmt_ci, fmt_g, fmt_ratio, fmt_us, md_table, shape_label
from lab.report.load import RunData, _num, _titled, _variant
from lab.report.tables import _sdpa_gap


# The bar this study set itself (issue 5): the last step against SDPA's FlashAttention-2 backend.
BAR_CANONICAL = [Shape(1, 8, 512, 64, False), Shape(4, 16, 512, 64, False), Shape(8, 16, 512, 64, False)]
BAR_LARGE = [Shape(4, 16, 4096, 64, False), Shape(4, 16, 4096, 64, True), Shape(4, 16, 4096, 128, False),
             Shape(4, 16, 4096, 128, True)]
BAR_STRETCH = [Shape(4, 16, 4096, 128, False), Shape(4, 16, 4096, 128, True)]
BAR_FAST, BAR_FAST_LO, BAR_THIRD = 1.10, 1.05, 1.05  # median, lower CI end, the third shape's median
BAR_TENSOR_PIPE = 50.0  # % at the large shapes
BAR_BANK_CONFLICTS = 1.0  # % of shared wavefronts, at most (exclusive)
BAR_PARITY = 1.0  # large shapes against flash, and the stretch against the fastest backend


def bar_rule() -> str:
    """The bar in words, from the constants above."""
    return (f"Canonical shapes, per causal/non-causal and mode: at least {BAR_FAST:.2f}× (95 % interval's lower end "
            f"above {BAR_FAST_LO:.2f}×) on two of the three, at least {BAR_THIRD:.2f}× on the third, and a p90 no "
            f"worse than SDPA's; large shapes: at least {BAR_PARITY:.1f}×; the profile at the large shapes: no "
            f"spills, bank conflicts under {BAR_BANK_CONFLICTS:g} %, tensor pipe active at least "
            f"{BAR_TENSOR_PIPE:g} %; stretch: at least {BAR_PARITY:.1f}× the fastest SDPA backend at "
            f"{shape_label(BAR_STRETCH[0]).removesuffix(' non-causal')}.")


def _grid_note(data: RunData, impl: str, shape: Shape) -> str:
    """CTAs and waves of impl at shape, from its launch shape and the resident CTAs per SM that
    ncu measured for it at the profiled stand-in."""
    launch = (data.build.get(impl) or {}).get("launch", {}).get(str(shape.D), {})
    rows = launch.get("rows_per_block")
    prow = data.profile_row(impl, data.profile_shape_for(shape))
    sms = _num((prow or {}).get("sm_count")) or _num(data.env.get("sm_count"))
    if not rows or not prow or not sms:
        return ""
    grid_p, waves_p = _num(prow.get("grid_size")), _num(prow.get("waves"))
    if not grid_p or not waves_p:
        return ""
    per_sm = round(grid_p / (waves_p * sms))
    ctas = -(-shape.S // rows) * shape.B * shape.H
    return f"{ctas} CTAs of {rows} rows, {per_sm} per SM: {ctas / (per_sm * sms):.2f} waves"


def bar_step(data: RunData) -> str:
    """The last step of the ladder with samples at a shape of the bar ('' if none): on a GPU that
    cannot build the arch-specific steps, the last portable one."""
    shapes = BAR_CANONICAL + BAR_LARGE
    return next((v for v in reversed(data.variants)
                 if any(data.lat(v, sh, m) is not None for sh in shapes for m in data.modes)), "")


def success_bar(data: RunData, best: str, peer: str = PEER) -> list[str]:
    """Markdown lines: the bar, row by row, with the verdict and (where missed) the profiler's view."""
    out = []
    if not best or data.lat(best, BAR_CANONICAL[0], "hot") is None and data.lat(best, BAR_LARGE[0], "hot") is None:
        return out
    rows, verdicts = [], []

    def p90(impl, shape, mode):
        x = data.lat(impl, shape, mode)
        return float(np.percentile(x, 90)) if x is not None and len(x) else None

    for causal in (False, True):
        for mode in data.modes:
            group = [Shape(s.B, s.H, s.S, s.D, causal) for s in BAR_CANONICAL]
            cis = [data.speedup(best, peer, sh, mode) for sh in group]
            if any(c is None for c in cis):
                continue
            fast = sum(c.ratio >= BAR_FAST and c.lo > BAR_FAST_LO for c in cis)
            p90_ok = all((p90(best, sh, mode) or np.inf) <= (p90(peer, sh, mode) or -np.inf) for sh in group)
            met = fast >= 2 and all(c.ratio >= BAR_THIRD for c in cis) and p90_ok
            worse_p90 = [sh for sh in group if (p90(best, sh, mode) or np.inf) > (p90(peer, sh, mode) or -np.inf)]
            for sh, c in zip(group, cis):
                level = (f"≥ {BAR_FAST:.2f}×" if c.ratio >= BAR_FAST and c.lo > BAR_FAST_LO
                         else f"≥ {BAR_THIRD:.2f}×" if c.ratio >= BAR_THIRD else f"below {BAR_THIRD:.2f}×")
                rows.append([shape_label(sh), mode, fmt_us(data.median(best, sh, mode)), fmt_us(data.median(peer, sh, mode)),
                             fmt_ci(c.ratio, c.lo, c.hi), f"{fmt_us(p90(best, sh, mode))} / {fmt_us(p90(peer, sh, mode))}",
                             level + ("" if sh not in worse_p90 else "; p90 worse")])
            verdicts.append((f"canonical, {'causal' if causal else 'non-causal'}, {mode}", met,
                             f"{fast} of 3 at ≥ {BAR_FAST}× with the lower end above {BAR_FAST_LO}, smallest "
                             f"{fmt_ratio(min(c.ratio for c in cis))}×"
                             + (f", p90 worse at {', '.join(shape_label(sh) for sh in worse_p90)}" if worse_p90 else ""),
                             group))
    for sh in BAR_LARGE:
        for mode in data.modes:
            c = data.speedup(best, peer, sh, mode)
            if c is None:
                continue
            rows.append([shape_label(sh), mode, fmt_us(data.median(best, sh, mode)), fmt_us(data.median(peer, sh, mode)),
                         fmt_ci(c.ratio, c.lo, c.hi), f"{fmt_us(p90(best, sh, mode))} / {fmt_us(p90(peer, sh, mode))}",
                         f"≥ {BAR_PARITY:.1f}×" if c.ratio >= BAR_PARITY else f"below {BAR_PARITY:.1f}×"])
            verdicts.append((f"{shape_label(sh)}, {mode}", c.ratio >= BAR_PARITY, f"{fmt_ratio(c.ratio)}×", [sh]))
    out.append(md_table(["shape", "mode", f"{best} µs", f"{peer} µs", f"{best} vs {peer} [95% CI]",
                         f"p90 µs ({best} / {peer})", "this row"], rows))
    out.append("")
    stretch = []
    for sh in BAR_STRETCH:
        for mode in data.modes:
            fast = data.fastest_sdpa(sh, mode)
            c = data.speedup(best, fast, sh, mode) if fast else None
            if c is not None:
                stretch.append(f"{shape_label(sh)} {mode}: {fmt_ci(c.ratio, c.lo, c.hi)} against {fast}")
                verdicts.append((f"stretch, {shape_label(sh)}, {mode}, vs {fast}", c.ratio >= BAR_PARITY,
                                 f"{fmt_ratio(c.ratio)}×", [sh]))
    if stretch:
        out.append(f"Stretch, ≥ {BAR_PARITY:.1f}× the fastest SDPA backend at "
                   f"{shape_label(BAR_STRETCH[0]).removesuffix(' non-causal')}: " + "; ".join(stretch) + ".")
        out.append("")
    # the best step's profile at the large shapes
    prof_lines = []
    for sh in dict.fromkeys(Shape(s.B, s.H, s.S, s.D, False) for s in BAR_LARGE):
        pshape = data.profile_shape_for(sh)
        r = data.profile_row(best, pshape)
        if not r:
            continue
        local = _num(r.get("local_bytes"))
        if local is None:
            local = (_num(r.get("local_bytes_ld")) or 0) + (_num(r.get("local_bytes_st")) or 0)
        bank, pipe = _num(r.get("bank_conflict_pct")), _num(r.get("tensor_pipe_active"))
        ok = local == 0 and bank is not None and bank < BAR_BANK_CONFLICTS and pipe is not None and pipe >= BAR_TENSOR_PIPE
        prof_lines.append(f"{shape_label(pshape)}: local-memory (spill) traffic {fmt_g(local)} bytes, bank conflicts "
                          f"{fmt_g(bank)} % of shared wavefronts, tensor pipe active {fmt_g(pipe)} % "
                          f"({'meets' if ok else 'misses'} 0 spills, < {BAR_BANK_CONFLICTS:g} % conflicts, ≥ {BAR_TENSOR_PIPE:g} % tensor pipe)")
        verdicts.append((f"profile at {shape_label(pshape)}", ok, prof_lines[-1].split(": ", 1)[1], [sh]))
    if prof_lines:
        out.append("Profile of " + best + ": " + "; ".join(prof_lines) + ".")
        out.append("")
    met = [v for v in verdicts if v[1]]
    missed = [v for v in verdicts if not v[1]]
    out.append(f"**Verdict:** {len(met)} of {len(verdicts)} parts of the bar met."
               + (" Missed:" if missed else " All met."))
    out.append("")
    gaps = {}
    for label, _, why, shapes in missed:
        if label.startswith(("stretch", "profile")):
            pshape = data.profile_shape_for(Shape(shapes[0].B, shapes[0].H, shapes[0].S, shapes[0].D, False))
            if pshape not in gaps:
                gaps[pshape] = _sdpa_gap(data, pd.DataFrame([{"variant": best, "title": _titled(_variant(best))
                                                              if _variant(best) else best}]), pshape)
            out.append(f"- {label}: {why}.")
            continue
        grid = "; ".join(g for g in (f"{shape_label(sh)}: {_grid_note(data, best, sh)}" if _grid_note(data, best, sh)
                                     else "" for sh in shapes) if g)
        out.append(f"- {label}: {why}" + (f" (launch: {grid})" if grid else "") + ".")
    if missed:
        out.append("")
    for pshape, gap in gaps.items():
        if gap:
            out.append(f"At {shape_label(pshape)}, " + gap[0].lower() + gap[1:])
            out.append("")
    return out
