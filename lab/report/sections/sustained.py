"""Burst and sustained (issue 45): the hot mode times bursts at the clock an idle GPU boosts to; the
sustained mode times the same kernels back to back at the clocks the GPU holds at its power limit
(lab.measure.timing.SustainedTimer). At the shapes the run measured both: each row's median in both
modes with its SM clock, the headline branch's end against every other row in both, where the order
of the implementations changes, the sustained ratios' leave-one-replicate-out calibration and what
the mode cost the run. Absent for runs without the sustained mode."""

from __future__ import annotations

import statistics

from lab.measure import stats
from lab.report.formats import MISSING, fmt_ci, md_table, new_lines, shape_label
from lab.report.context import Context
from lab.report.load import HOT, SUSTAINED, RunData


def _rows(data: RunData, impl: str, shape, mode: str):
    s = data.samples
    return s[(s["impl"] == impl) & (s["mode"] == mode) & (s["B"] == shape.B) & (s["H"] == shape.H)
             & (s["S"] == shape.S) & (s["D"] == shape.D) & (s["causal"].astype(bool) == shape.causal)
             & (s["H_kv"] == shape.H_kv) & (s["dtype"] == shape.torch_dtype_name)]


def _turn_mean(sel) -> float | None:
    """The median over samples `sel` of their turn's mean SM clock after its settle (MHz; samples.parquet's
    sm_clock_mean_mhz, recorded from 2026-12-05 on); None where they have none."""
    clocks = sel["sm_clock_mean_mhz"].dropna() if "sm_clock_mean_mhz" in sel.columns else []
    return float(statistics.median(clocks)) if len(clocks) else None


def turn_clock(data: RunData, impl: str, shape) -> float | None:
    """_turn_mean of the row's sustained samples; None where the run has none."""
    return _turn_mean(_rows(data, impl, shape, SUSTAINED))


def clock_and_cycles(data: RunData, end: str, other: str, shape, sustained) -> str:
    """Where both rows carry their turns' mean clocks: " (its clock c×, its cycles a launch k× <other>'s)", the
    sustained speedup split into the clock the power cap held each at and the cycles each launch took at it
    (a launch's time is its cycles over the clock, so the cycles' ratio is the clocks' over the speedup); ""
    elsewhere."""
    a, b = turn_clock(data, end, shape), turn_clock(data, other, shape)
    if a is None or b is None or sustained is None:
        return ""
    return f" (its clock {a / b:.3f}×, its cycles a launch {a / b / sustained.ratio:.3f}× {other}'s)"


def _clock(data: RunData, impl: str, shape, mode: str) -> str:
    """The median SM clock of the row's turns (MHz): in the sustained mode the turns' means after their settle
    where the run records them, else the one reading NVML gave at each turn; and the median power draw where
    recorded."""
    sel = _rows(data, impl, shape, mode)
    mean = _turn_mean(sel) if mode == SUSTAINED else None
    clocks = sel["sm_clock_mhz"].dropna()
    text = f"{mean:.0f}" if mean is not None else f"{statistics.median(clocks):.0f}" if len(clocks) else MISSING
    if "power_w" in sel.columns and sel["power_w"].notna().any():
        text += f" / {statistics.median(sel['power_w'].dropna()):.0f} W"
    return text


def order(data: RunData, shape, mode: str, impls: list[str]) -> list[str]:
    """The rows measured at `shape` in `mode`, fastest first (by the median over replicates)."""
    timed = [i for i in impls if data.median(i, shape, mode) is not None]
    return sorted(timed, key=lambda i: (data.median(i, shape, mode), i))


def ranking_changes(data: RunData, shape, impls: list[str]) -> tuple[list[str], list[str]]:
    """The pairs whose order differs between hot and sustained at `shape`, as (changes, swaps): a change
    where the speedup's 95 % interval lies on one side of 1 hot and on the other sustained; a swap
    where the medians' order flips but an interval holds 1 (the two are within their noise)."""
    hot, sus = order(data, shape, HOT, impls), order(data, shape, SUSTAINED, impls)
    both = [i for i in hot if i in sus]
    changes, swaps = [], []
    for n, a in enumerate(both):
        for b in both[n + 1:]:  # a ahead of b hot
            if sus.index(a) < sus.index(b):
                continue
            h, s_ = data.speedup(a, b, shape, HOT), data.speedup(a, b, shape, SUSTAINED)
            text = f"{a} ahead of {b} hot, behind it sustained"
            clear = h is not None and s_ is not None and h.lo > 1 and s_.hi < 1
            (changes if clear else swaps).append(text + ("" if clear else f" ({_ci(h)} hot, {_ci(s_)} sustained)"))
    return changes, swaps


def section_sustained(ctx: Context) -> list[str]:
    from lab.kernels.manifest import headline_end
    from lab.studies import derived

    data = ctx.data
    shapes = data.sustained_shapes
    if not shapes:
        return []
    end = headline_end([v for v in data.variants if any(data.lat(v, s, SUSTAINED) is not None for s in shapes)])
    L, add = new_lines()
    add("## Burst and sustained")
    add("")
    how = next((n["sustained"] for n in data.shape_notes or [] if isinstance(n, dict) and n.get("sustained")), None)
    add("The hot mode times bursts: every block of samples starts behind a 1 ms GPU sleep, so the GPU runs it at the "
        "clock an idle GPU boosts to. Training and serving run attention back to back for minutes, at the clocks the "
        "GPU holds at its power limit. The sustained mode times that: at each shape below the rows take turns of "
        "back-to-back CUDA-graph replays, the GPU never idle between them, after a lead-in from idle; the first part "
        "of every turn carries the previous row's clock state and is not kept (lab.measure.timing.SustainedTimer; why "
        "these lengths: docs/methodology.md)"
        + (f": turns of {how['turn_ms']:.0f} ms, the first {how['settle_ms']:.0f} ms not kept, a {how['lead_in_s']:g} s "
           f"lead-in, a sample one replay of about {how['replay_us'] / 1e3:.0f} ms (per launch), at least "
           f"{how['min_turns']} turns a row in each replicate" if how else "")
        + f". Speedups are {data.speedup_words()}.")
    add("")
    for shape in shapes:
        impls = [i for i in data.impls(shape) if data.lat(i, shape, SUSTAINED) is not None]
        rows = []
        for impl in order(data, shape, SUSTAINED, impls):
            hot, sus = data.median(impl, shape, HOT), data.median(impl, shape, SUSTAINED)
            rows.append([impl, _us_tflops(shape, hot), _clock(data, impl, shape, HOT) if hot else MISSING,
                         _us_tflops(shape, sus), _clock(data, impl, shape, SUSTAINED),
                         f"{sus / hot:.3f}" if hot and sus else MISSING])
        add(f"**{shape_label(shape)}**, fastest sustained first.")
        add("")
        traced = any(turn_clock(data, i, shape) is not None for i in impls)
        add(md_table(["implementation", "hot µs (TFLOP/s)", "hot SM MHz", "sustained µs (TFLOP/s)",
                      "sustained SM MHz (a turn's mean) / power" if traced else "sustained SM MHz / power",
                      "sustained / hot latency"], rows, "lrrrrr"))
        add("")
        if end in impls:
            cells = []
            for other in [i for i in order(data, shape, SUSTAINED, impls) if i != end]:
                hot, sus = data.speedup(end, other, shape, HOT), data.speedup(end, other, shape, SUSTAINED)
                cells.append(f"{other}: hot {_ci(hot)}, sustained {_ci(sus)}"
                             + clock_and_cycles(data, end, other, shape, sus))
            add(f"{end} against each, > 1: {end} faster. " + "; ".join(cells) + ".")
            add("")
        changes, swaps = ranking_changes(data, shape, impls)
        add(("The order of the implementations is the same in both modes" if not changes else
             "Where the order changes (both intervals clear of 1, on opposite sides): " + "; ".join(changes))
            + ("" if not swaps else "; medians that swap places within their intervals: " + "; ".join(swaps)) + ".")
        add("")
    cal = derived.sustained_calibration(data.rec)
    if cal.get("applicable"):
        add(f"**Calibration of the sustained ratios (leave one replicate out).** Over the {cal['ratios']} ratios above "
            f"and each of the {cal['replicates']} replicates left out in turn ({cal['points']} points), the 95 % "
            f"interval from the others covered the left-out replicate's ratio at {cal['covered'] * 100:.1f} % "
            f"(calibrated: about {cal['expected_covered'] * 100:.1f} %), and the prediction interval for one "
            f"replicate at {cal['pred_covered'] * 100:.1f} % (nominal 95 %).")
    else:
        add(f"**Calibration of the sustained ratios.** Not possible here: {cal.get('reason', MISSING)}.")
    add("")
    seconds = data.scope_seconds.get(SUSTAINED)
    if seconds:
        add(f"**What the mode costs.** Its jobs took {seconds:.1f} s of the timing stage"
            + (f" over the {data.replicates} replicates" if data.replicates > 1 else "") + " (replicates.json).")
        add("")
    return L


def _us_tflops(shape, us) -> str:
    if us is None:
        return MISSING
    return f"{us:.1f} ({stats.tflops(shape.B, shape.H, shape.S, shape.D, shape.causal, us):.0f})"


def _ci(sp) -> str:
    return MISSING if sp is None else fmt_ci(sp.ratio, sp.lo, sp.hi)
