"""The report's tables as DataFrames and rows: the ablation at a shape (each step against its
parent, its hypothesis judged), per-shape tables, the noise floor, precision, clocks, the
cross-validations, the profiler's top findings and the rows the time cap stopped."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from lab.kernels.shape import Shape
from lab.measure import stats
from lab.measure.profile import HYPOTHESIS_METRICS
from lab.report import branches
from lab.report.common import (FINDING_METRICS, METRIC_MOVE, MISSING, PEER, XVAL_GAP, _isnum, fmt, fmt_ci, fmt_g,
                               fmt_us, shape_label)
from lab.report.load import RunData, _data, _first_line, _manifest, _num, _titled, _variant
from lab.studies.measure_shape import AA_SUFFIX
from lab.studies.shapes import shape_set


def _smem_per_block(row: dict | None):
    if row is None:
        return None
    if _isnum(row.get("smem_per_block")):
        return float(row["smem_per_block"])
    parts = [row.get("smem_dynamic"), row.get("smem_static")]
    return float(sum(p for p in parts if _isnum(p))) if any(_isnum(p) for p in parts) else None


def _rel_change(old, new):
    if not (_isnum(old) and _isnum(new)):
        return None
    if old == 0:
        return 0.0 if new == 0 else math.copysign(math.inf, new)
    return (new - old) / abs(old)


def hypothesis_verdict(direction: str, metric_parent, metric_value, speed_verdict: str | None,
                       predicted: tuple[float, float] | None) -> str:
    """The rule stated in lab.report's docstring and in the report."""
    rel = _rel_change(metric_parent, metric_value)
    if rel is None:
        return "inconclusive (no profile)"
    predicted_way = rel < -METRIC_MOVE if direction == "down" else rel > METRIC_MOVE
    other_way = rel > METRIC_MOVE if direction == "down" else rel < -METRIC_MOVE
    if other_way or speed_verdict == "slower":
        return "refuted"
    includes_one = predicted is not None and predicted[0] <= 1.0 <= predicted[1]
    speed_ok = speed_verdict == "faster" or (speed_verdict == "within noise" and includes_one)
    if predicted_way and speed_ok:
        return "confirmed"
    return "inconclusive"


def _vs_prediction(ci: stats.SpeedupCI | None, predicted) -> str:
    if ci is None or predicted is None:
        return MISSING
    lo, hi = predicted
    if ci.hi < lo:
        return "below"
    if ci.lo > hi:
        return "above"
    return "within"


def ablation_table(rec, shape=None, mode: str = "hot") -> pd.DataFrame:
    """One row per variant at `shape` (default: the headline shape), branch by branch, each step
    judged against its manifest parent."""
    return _ablation(_data(rec), shape, mode)


def _ablation(data: RunData, shape=None, mode: str = "hot") -> pd.DataFrame:
    shape = Shape.of(shape) if shape is not None else data.headline()
    names = data.variants
    pshape = data.profile_shape_for(shape) if shape is not None else None
    best = data.fastest_sdpa(shape, mode) if shape is not None else None
    tensor_peak = data.ceilings["tensor_tflops"] if data.ceilings else None
    hyp_map = HYPOTHESIS_METRICS

    # vs parent: one family of hypotheses, BH-corrected together
    pairs, pair_idx = [], {}
    for name in names:
        v = _variant(name)
        parent = v.parent if v else ""
        if shape is None or not parent:
            continue
        a, b = data.reps(name, shape, mode), data.reps(parent, shape, mode)
        if a is not None and b is not None:
            pair_idx[name] = len(pairs)
            pairs.append((a, b))
    comps = stats.compare_rows(pairs, seed=0) if pairs else []

    rows = []
    for name in names:
        v = _variant(name)
        parent = v.parent if v else ""
        r = {"step": v.index if v else None, "variant": name, "parent": parent or "",
             "title": _titled(v) if v else name, "change": v.change if v else "(not in the manifest)",
             "shape": shape_label(shape) if shape else None, "mode": mode}
        lat = data.lat(name, shape, mode) if shape else None
        if name in data.excluded:
            r["status"] = "excluded: " + _first_line(data.excluded[name])
        elif lat is None:
            r["status"] = "no samples at this shape"
        else:
            r["status"] = "measured"
        r["n"] = int(len(lat)) if lat is not None else 0
        med = data.median(name, shape, mode) if lat is not None else None
        r["median_us"] = med
        r["tflops"] = stats.tflops(shape.B, shape.H, shape.S, shape.D, shape.causal, med) if med else None
        r["pct_tensor_peak"] = r["tflops"] / tensor_peak * 100 if r["tflops"] and tensor_peak else None
        for key, base in (("vs_sdpa_flash", PEER), ("vs_best_sdpa", best)):
            ci = data.speedup(name, base, shape, mode) if (med and base) else None
            r[key], r[key + "_lo"], r[key + "_hi"] = (ci.ratio, ci.lo, ci.hi) if ci else (None, None, None)
        r["best_sdpa"] = best or ""
        cmp = comps[pair_idx[name]] if name in pair_idx else None
        if cmp is not None:
            r.update(vs_parent=cmp.speedup.ratio, vs_parent_lo=cmp.speedup.lo, vs_parent_hi=cmp.speedup.hi,
                     cliffs_delta=cmp.cliffs_delta, p_value=cmp.p_value, p_adjusted=cmp.p_adjusted,
                     speed_verdict=cmp.verdict())
        else:
            r.update(vs_parent=None, vs_parent_lo=None, vs_parent_hi=None, cliffs_delta=None, p_value=None,
                     p_adjusted=None, speed_verdict="" if not parent else "not measured")
        predicted = tuple(v.speedup) if v else None
        r["predicted_lo"], r["predicted_hi"] = predicted if predicted else (None, None)
        r["vs_prediction"] = _vs_prediction(cmp.speedup if cmp else None, predicted) if parent else MISSING

        prow = data.profile_row(name, pshape)
        r["profile_shape"] = shape_label(pshape) if pshape else None
        r["profile_duration_us"] = _num(prow.get("duration_us")) if prow else None
        r["dram_gbps"] = prow["dram_bytes_per_s"] / 1e9 if prow and _isnum(prow.get("dram_bytes_per_s")) else None
        r["achieved_occupancy"] = _num(prow.get("achieved_occupancy")) if prow else None
        r["registers"] = _num(prow.get("registers")) if prow else None
        r["smem_per_block"] = _smem_per_block(prow)
        r["bank_conflict_pct"] = _num(prow.get("bank_conflict_pct")) if prow else None
        r["tensor_pipe_pct"] = _num(prow.get("tensor_pipe_active")) if prow else None
        r["profile_note"] = "" if prow else (data.profile_failure(name, pshape) or "not profiled")

        r["hypothesis"] = v.hypothesis if v else ""
        r["metric"] = v.metric if v else ""
        col = hyp_map.get(v.metric) if v else None
        r["metric_column"] = col or ""
        r["direction"] = v.direction if v else ""
        pprow = data.profile_row(parent, pshape) if parent else None
        r["metric_parent"] = _num(pprow.get(col)) if (pprow and col) else None
        r["metric_value"] = _num(prow.get(col)) if (prow and col) else None
        rel = _rel_change(r["metric_parent"], r["metric_value"])
        r["metric_change_pct"] = rel * 100 if rel is not None else None
        if not v:
            r["hypothesis_verdict"] = "inconclusive (not in the manifest)"
        elif not parent:
            r["hypothesis_verdict"] = "reference (no parent)"
        elif lat is None:
            r["hypothesis_verdict"] = "inconclusive (not measured)"
        elif cmp is None:
            r["hypothesis_verdict"] = "inconclusive (parent not measured)"
        else:
            r["hypothesis_verdict"] = hypothesis_verdict(v.direction, r["metric_parent"], r["metric_value"],
                                                         r["speed_verdict"], predicted)
        rows.append(r)
    df = pd.DataFrame(rows)
    df.attrs.update(shape=shape_label(shape) if shape else None, mode=mode, best_sdpa=best,
                    profile_shape=shape_label(pshape) if pshape else None)
    return df


def hypothesis_rows(data: RunData, abl: pd.DataFrame, mode: str = "hot") -> pd.DataFrame:
    """The headline ablation rows, except that a step whose manifest names a `judged_at` shape
    (one that changes, say, only D = 128) is judged there, when the run measured it: its row
    comes from the ablation at that shape, with `judged_at` set to the shape's label."""
    from lab.kernels import variants

    out = abl.copy()
    out["judged_at"] = ""
    manifest = {v.name: v for v in _manifest()}
    by_shape: dict = {}
    for i, r in enumerate(abl.itertuples()):
        shape = variants.judged_shape(manifest[r.variant]) if r.variant in manifest else None
        if shape is None or shape not in data.measured_shapes or shape_label(shape) == abl.attrs.get("shape"):
            continue
        if shape not in by_shape:
            by_shape[shape] = _ablation(data, shape, mode).set_index("variant", drop=False)
        row = by_shape[shape].loc[r.variant].copy()
        row["judged_at"] = shape_label(shape)
        out.iloc[i] = row[out.columns]
    return out


# ---------------------------------------------------------------------------------------------
# Per-shape tables, noise floor, clocks, cross-validation
# ---------------------------------------------------------------------------------------------


def shape_group(shape: Shape) -> str:
    for name in ("canonical", "large", "sweep", "models"):
        if shape in shape_set(name):
            return name
    return "other"


def shape_tables(rec) -> dict[Shape, pd.DataFrame]:
    """Per measured shape: every implementation, hot and cold medians, TFLOP/s, vs sdpa_flash."""
    data = _data(rec)
    return {shape: _shape_table(data, shape) for shape in data.measured_shapes}


def _shape_table(data: RunData, shape: Shape) -> pd.DataFrame:
    rows = []
    for impl in data.impls(shape):
        r = {"impl": impl}
        for mode in data.modes:
            med = data.median(impl, shape, mode)
            ci = data.speedup(impl, PEER, shape, mode) if (med and impl != PEER) else None
            srow = data.summary_row(impl, shape, mode)
            r.update({f"{mode}_median_us": med,
                      f"{mode}_tflops": stats.tflops(*_dims(shape), shape.causal, med) if med else None,
                      f"{mode}_vs_sdpa_flash": ci.ratio if ci else None,
                      f"{mode}_vs_sdpa_flash_lo": ci.lo if ci else None,
                      f"{mode}_vs_sdpa_flash_hi": ci.hi if ci else None,
                      f"{mode}_n": len(data.lat(impl, shape, mode)) if med else 0,
                      f"{mode}_stopped_by": srow.get("stopped_by") if srow else None,
                      f"{mode}_input_sets": srow.get("input_sets") if srow else None})
        rows.append(r)
    return pd.DataFrame(rows)


def _dims(shape: Shape):
    return shape.B, shape.H, shape.S, shape.D


def noise_floor(rec) -> pd.DataFrame:
    """The A/A twin (`<impl>__aa`) against its original, per shape and mode (BH across rows)."""
    data = _data(rec)
    keys, pairs = [], []
    for shape in data.measured_shapes:
        for mode in data.modes:
            for impl in data.impls(shape):
                if not impl.endswith(AA_SUFFIX):
                    continue
                base = impl[: -len(AA_SUFFIX)]
                a, b = data.reps(impl, shape, mode), data.reps(base, shape, mode)
                if a is not None and b is not None:
                    keys.append((shape, mode, impl, base))
                    pairs.append((a, b))
    comps = stats.compare_rows(pairs, seed=0) if pairs else []
    rows = []
    for (shape, mode, impl, base), c in zip(keys, comps):
        rows.append(dict(shape=shape_label(shape), mode=mode, impl=impl, base=base, ratio=c.speedup.ratio,
                         lo=c.speedup.lo, hi=c.speedup.hi, p_adjusted=c.p_adjusted, verdict=c.verdict()))
    return pd.DataFrame(rows, columns=["shape", "mode", "impl", "base", "ratio", "lo", "hi", "p_adjusted", "verdict"])


PRECISION_BAND = 0.01  # a speedup interval "as tight as a change the verdicts can call": +-1 %


def precision_summary(data: RunData, group: str = "canonical", band: float = PRECISION_BAND) -> dict:
    """How many speedup intervals against PEER at the shapes of `group` lie within +-band of their
    ratio, and which do not (each with its sample count, stop reason and the share of its samples
    within +-0.5 % of its median: few, after many samples, mean a median between two modes)."""
    total, wider = 0, []
    for shape in data.measured_shapes:
        if shape_group(shape) != group:
            continue
        for mode in data.modes:
            for impl in data.impls(shape):
                if impl == PEER:
                    continue
                ci = data.speedup(impl, PEER, shape, mode)
                if ci is None:
                    continue
                total += 1
                half = max(ci.ratio - ci.lo, ci.hi - ci.ratio) / ci.ratio
                if half > band:
                    row = data.summary_row(impl, shape, mode) or {}
                    lat = np.asarray(data.lat(impl, shape, mode))
                    med = float(np.median(lat))
                    near = float(np.mean(np.abs(lat - med) <= 0.005 * med)) * 100  # density at the median
                    wider.append(dict(impl=impl, shape=shape_label(shape), mode=mode, half_pct=half * 100,
                                      n=row.get("n"), stopped_by=row.get("stopped_by"), near_median_pct=near))
    return {"total": total, "within": total - len(wider), "wider": wider}


def variance_split_table(data: RunData) -> list[list]:
    """Per measured shape with two or more replicates: how many (impl, mode) rows, the median over
    them of the between- and within-replicate SD of a median (% of it), of the between share, and
    how many rows vary more between replicates than within (lab.measure.stats.variance_split)."""
    rows = []
    for shape in data.measured_shapes:
        splits = [stats.variance_split(reps, seed=0) for mode in data.modes for impl in data.impls(shape)
                  if len(reps := data.reps(impl, shape, mode) or {}) >= 2]
        if not splits:
            continue
        between = np.median([math.sqrt(v.between) * 100 for v in splits])
        within = np.median([math.sqrt(v.within) * 100 for v in splits])
        rows.append([shape_label(shape), len(splits), fmt(between, 2), fmt(within, 2),
                     fmt(float(np.median([v.between_share for v in splits])), 2),
                     f"{sum(v.between > v.within for v in splits)} of {len(splits)}"])
    return rows


def calibration_summary(data: RunData) -> dict:
    """The run's leave-one-replicate-out calibration (lab.studies.derived.calibration: computed from
    its samples, kept under build/derived/)."""
    from lab.studies import derived

    return derived.calibration(data.rec)


def clock_summary(data: RunData) -> dict:
    raw = data.raw_samples
    out = {"n": int(len(raw)), "throttled": 0, "clock_min": None, "clock_max": None, "clock_median": None}
    if not len(raw):
        return out
    out["throttled"] = int(raw["throttled"].fillna(False).astype(bool).sum())
    clk = pd.to_numeric(raw["sm_clock_mhz"], errors="coerce").dropna()
    if len(clk):
        out.update(clock_min=float(clk.min()), clock_max=float(clk.max()), clock_median=float(clk.median()))
    out["clock_missing"] = int(len(raw) - len(clk))
    return out


def _clock_range(clk) -> str:
    if clk["clock_min"] == clk["clock_max"]:
        return f"constant at {fmt(clk['clock_min'], 0)} MHz"
    return f"{fmt(clk['clock_min'], 0)}–{fmt(clk['clock_max'], 0)} MHz"


def crossval_table(data: RunData) -> tuple[list[list], list[str]]:
    rows, gaps = [], []
    for c in data.crossval or []:
        if "error" in c:
            rows.append([c.get("shape", "?"), c.get("impl", "?"), MISSING, MISSING,
                         "error: " + _first_line(c["error"])])
            continue
        ratio = c.get("ratio")
        rows.append([c.get("shape"), c.get("impl"), fmt_us(c.get("harness_us")), fmt_us(c.get("triton_us")),
                     fmt(ratio, 3)])
        if _isnum(ratio) and abs(ratio - 1) > XVAL_GAP:
            gaps.append(f"{c.get('shape')}: harness/triton = {ratio:.3f} ({(ratio - 1) * 100:+.1f} %)")
    return rows, gaps


def ncu_crossval_table(data: RunData) -> list[list]:
    """The harness's hot medians against Nsight Compute's gpu__time_duration of the same SDPA
    kernels (a second, independent clock on the device)."""
    rows = []
    if data.profile is None or data.summary is None:
        return rows
    for _, p in data.profile.iterrows():
        if not str(p["impl"]).startswith("sdpa_") or not _isnum(p.get("duration_us")):
            continue
        shape = Shape.from_row(p)
        med = data.median(p["impl"], shape, "hot")
        if med is None:
            continue
        rows.append([shape_label(shape), p["impl"], fmt_us(med), fmt_us(p["duration_us"]),
                     fmt(med / p["duration_us"], 3)])
    return rows


# Below this kernel duration a single isolated launch under ncu and the per-launch share of a
# back-to-back graph replay measure different things (the gap between launches, anything else
# the call launches), so only longer kernels cross-validate the harness.
NCU_XVAL_MIN_US = 100.0


# ---------------------------------------------------------------------------------------------
# Profiler findings
# ---------------------------------------------------------------------------------------------


# lab.kernels.manifest.METRICS (a hypothesis's metric) -> the FINDING_METRICS column that shows it best:
# the profile column of lab.measure.profile.HYPOTHESIS_METRICS, bank conflicts as a share, not a count
FINDING_FOR_HYPOTHESIS = {**HYPOTHESIS_METRICS, "shared_bank_conflicts": "bank_conflict_pct"}


def _move_text(label, unit, a, b) -> str:
    how = "rose" if b > a else "fell" if b < a else "stayed"
    rel = _rel_change(a, b)
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
        a, b = _num(old.get(col)), _num(new.get(col))
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
    sdpa = _sdpa_gap(data, abl, pshape)
    findings = []
    for _, r, moves in steps[: n - 1 if sdpa else n]:
        top = moves[:2]
        want = FINDING_FOR_HYPOTHESIS.get(r.metric)
        top.sort(key=lambda m: m[1] != want)  # the predicted mechanism first, when it is among them
        text = "; ".join(_move_text(m[2], m[3], m[4], m[5]) for m in top if m[0] > 0)
        speed = (f" The step ran {fmt_ci(r.vs_parent, r.vs_parent_lo, r.vs_parent_hi)} against its parent "
                 f"({r.speed_verdict})." if _isnum(r.vs_parent) else "")
        findings.append(f"**{r.title}** ({r.parent} → {r.variant}): {text}.{speed}")
    if sdpa:
        findings.append(sdpa)
    return findings


def _sdpa_gap(data: RunData, abl: pd.DataFrame, pshape: Shape) -> str | None:
    """The best step of `abl` (branches.best_step; else its last profiled row) against the fastest
    SDPA kernel profiled at pshape."""
    profiled = [r for r in abl.itertuples() if data.profile_row(r.variant, pshape)]
    best = branches.best_step(data)
    last = next((r for r in profiled if r.variant == best), profiled[-1] if profiled else None)
    peers = [i for i in data.profile["impl"].unique() if str(i).startswith("sdpa_")] if data.profile is not None else []
    prows = {p: data.profile_row(p, pshape) for p in sorted(peers)}
    prows = {p: r for p, r in prows.items() if r and _isnum(r.get("duration_us"))}
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
    if _isnum(mine.get("duration_us")):
        parts.append(f"its kernel takes {mine['duration_us'] / peer['duration_us']:.2f}× as long under ncu "
                     f"({fmt(mine['duration_us'], 1)} µs vs {fmt(peer['duration_us'], 1)} µs)")
    stalls_m, stalls_p = _top_stall(mine), _top_stall(peer)
    if stalls_m:
        parts.append(f"its top stall is {stalls_m[0]} ({fmt_g(stalls_m[1])} warps per issue)"
                     + (f" where {fastest}'s is {stalls_p[0]} ({fmt_g(stalls_p[1])})" if stalls_p else ""))
    bank = (mine.get("bank_conflict_pct"), peer.get("bank_conflict_pct"))
    if all(_isnum(b) for b in bank):
        parts.append(f"bank conflicts {fmt_g(bank[0])} % vs {fmt_g(bank[1])} %")
    occ = (mine.get("achieved_occupancy"), peer.get("achieved_occupancy"))
    if all(_isnum(o) for o in occ):
        parts.append(f"achieved occupancy {fmt_g(occ[0])} % vs {fmt_g(occ[1])} %")
    return "; ".join(parts) + "."


def _stall_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c.startswith("stall_") and c != "stall_selected"]


def _top_stall(row: dict | None):
    if not row:
        return None
    vals = [(c[len("stall_"):], row[c]) for c in row if c.startswith("stall_") and c != "stall_selected"
            and _isnum(row[c])]
    return max(vals, key=lambda cv: cv[1]) if vals else None


# --- rows the time cap stopped ----------------------------------------------------------------


def capped_rows(data: RunData) -> list[str]:
    """The rows the time cap stopped, each with its n and median CI half-width."""
    summ = data.summary
    if summ is None or "stopped_by" not in summ:
        return []
    cap_rows = []
    for r in summ[summ["stopped_by"] == "cap"].itertuples():
        s = Shape.from_row(r)
        x = data.lat(r.impl, s, r.mode)
        half = stats.relative_ci_halfwidth(x) if x is not None and len(x) else None
        cap_rows.append(f"{r.impl} at {shape_label(s)} {r.mode} (n={r.n}, median CI half-width "
                        f"{fmt(half * 100 if half is not None else None, 2)} %)")
    return cap_rows
