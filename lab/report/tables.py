"""The report's tables as DataFrames and rows: the ablation at a shape (each step against its
parent, its hypothesis judged), per-shape tables, the noise floor, precision, clocks, the
cross-validations and the rows the time cap stopped (the profiler's findings: lab.report.findings)."""

from __future__ import annotations

import math
from collections import Counter
from typing import NamedTuple

import numpy as np
import pandas as pd

from lab.kernels.shape import Shape
from lab.measure import ncu_xval, records, stats
from lab.measure.clocks import REASON_BITS
from lab.measure.ncu_metrics import HYPOTHESIS_METRICS
from lab.report.formats import METRIC_MOVE, MISSING, PEER, XVAL_GAP, isnum, fmt, fmt_us, shape_label
from lab.report.load import RunData, run_data, first_line, manifest_variants, number_or_none, step_title, manifest_variant
from lab.studies.measure_shape import AA_SUFFIX
from lab.studies.shapes import shape_set


def _smem_per_block(row: dict | None):
    if row is None:
        return None
    if isnum(row.get("smem_per_block")):
        return float(row["smem_per_block"])
    parts = [row.get("smem_dynamic"), row.get("smem_static")]
    return float(sum(p for p in parts if isnum(p))) if any(isnum(p) for p in parts) else None


def rel_change(old, new):
    if not (isnum(old) and isnum(new)):
        return None
    if old == 0:
        return 0.0 if new == 0 else math.copysign(math.inf, new)
    return (new - old) / abs(old)


def hypothesis_verdict(direction: str, metric_parent, metric_value, speed_verdict: str | None,
                       predicted: tuple[float, float] | None) -> str:
    """The rule stated in lab.report's docstring and in the report."""
    rel = rel_change(metric_parent, metric_value)
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
    return ablation_frame(run_data(rec), shape, mode)


def ablation_frame(data: RunData, shape=None, mode: str = "hot") -> pd.DataFrame:
    """One row per variant at `shape` (default: the headline shape), each step against its parent, as
    ablation_table; computed once a (shape, mode) for a run's data (the report asks for some many times),
    a copy each time."""
    shape = Shape.of(shape) if shape is not None else data.headline()
    if (shape, mode) not in data.ablations:
        data.ablations[(shape, mode)] = _ablation_frame(data, shape, mode)
    return data.ablations[(shape, mode)].copy()


def _ablation_frame(data: RunData, shape, mode: str) -> pd.DataFrame:
    names = data.variants
    pshape = data.profile_shape_for(shape) if shape is not None else None
    best = data.fastest_sdpa(shape, mode) if shape is not None else None
    tensor_peak = data.ceilings["tensor_tflops"] if data.ceilings else None
    comps = _vs_parent(data, names, shape, mode)

    rows = []
    for name in names:
        v = manifest_variant(name)
        parent = v.parent if v else ""
        r = {"step": v.index if v else None, "variant": name, "parent": parent or "",
             "title": step_title(v) if v else name, "change": v.change if v else "(not in the manifest)",
             "shape": shape_label(shape) if shape else None, "mode": mode}
        lat = data.lat(name, shape, mode) if shape else None
        if name in data.excluded:
            r["status"] = "excluded: " + first_line(data.excluded[name])
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
        cmp = comps.get(name)
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
        r.update(_profile_columns(data, name, prow, pshape))

        r["hypothesis"] = v.hypothesis if v else ""
        r["metric"] = v.metric if v else ""
        col = HYPOTHESIS_METRICS.get(v.metric) if v else None
        r["metric_column"] = col or ""
        r["direction"] = v.direction if v else ""
        # the hypothesis metric from a launch of the same masking (data.metric_shape_for), not the stand-in's
        mshape = data.metric_shape_for(shape) if shape is not None else None
        r["metric_shape"] = shape_label(mshape) if mshape else None
        mrow = data.profile_row(name, mshape) if mshape else None
        pprow = data.profile_row(parent, mshape) if (parent and mshape) else None
        r["metric_parent"] = number_or_none(pprow.get(col)) if (pprow and col) else None
        r["metric_value"] = number_or_none(mrow.get(col)) if (mrow and col) else None
        rel = rel_change(r["metric_parent"], r["metric_value"])
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


def _vs_parent(data: RunData, names: list[str], shape, mode: str) -> dict:
    """Each step against its parent at `shape`: one family of hypotheses, BH-corrected together
    ({step: stats.Comparison} for the steps whose parent was measured too)."""
    pairs, order = [], []
    for name in names:
        v = manifest_variant(name)
        parent = v.parent if v else ""
        if shape is None or not parent:
            continue
        a, b = data.reps(name, shape, mode), data.reps(parent, shape, mode)
        if a is not None and b is not None:
            order.append(name)
            pairs.append((a, b))
    return dict(zip(order, stats.compare_rows(pairs, seed=0))) if pairs else {}


def _profile_columns(data: RunData, name: str, prow, pshape) -> dict:
    """A step's profiler columns in the ablation table (None where it was not profiled at pshape)."""
    return {
        "profile_shape": shape_label(pshape) if pshape else None,
        "profile_duration_us": number_or_none(prow.get("duration_us")) if prow else None,
        "dram_gbps": prow["dram_bytes_per_s"] / 1e9 if prow and isnum(prow.get("dram_bytes_per_s")) else None,
        "achieved_occupancy": number_or_none(prow.get("achieved_occupancy")) if prow else None,
        "registers": number_or_none(prow.get("registers")) if prow else None,
        "smem_per_block": _smem_per_block(prow),
        "bank_conflict_pct": number_or_none(prow.get("bank_conflict_pct")) if prow else None,
        "tensor_pipe_pct": number_or_none(prow.get("tensor_pipe_active")) if prow else None,
        "profile_note": "" if prow else (data.profile_failure(name, pshape) or "not profiled"),
    }


def hypothesis_rows(data: RunData, abl: pd.DataFrame, mode: str = "hot") -> pd.DataFrame:
    """The headline ablation rows, except that a step whose manifest names a `judged_at` shape
    (one that changes, say, only D = 128) is judged there, when the run measured it: its row
    comes from the ablation at that shape, with `judged_at` set to the shape's label."""
    from lab.kernels import variants

    out = abl.copy()
    out["judged_at"] = ""
    manifest = {v.name: v for v in manifest_variants()}
    by_shape: dict = {}
    for i, r in enumerate(abl.itertuples()):
        shape = variants.judged_shape(manifest[r.variant]) if r.variant in manifest else None
        if shape is None or shape not in data.measured_shapes or shape_label(shape) == abl.attrs.get("shape"):
            continue
        if shape not in by_shape:
            by_shape[shape] = ablation_frame(data, shape, mode).set_index("variant", drop=False)
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
    data = run_data(rec)
    return {shape: shape_table(data, shape) for shape in data.measured_shapes}


def shape_table(data: RunData, shape: Shape) -> pd.DataFrame:
    rows = []
    for impl in data.impls(shape):
        r = {"impl": impl}
        for mode in data.modes:
            med = data.median(impl, shape, mode)
            ci = data.speedup(impl, PEER, shape, mode) if (med and impl != PEER) else None
            srow = data.summary_row(impl, shape, mode)
            r.update({f"{mode}_median_us": med,
                      f"{mode}_tflops": stats.tflops(*shape.dims, shape.causal, med) if med else None,
                      f"{mode}_vs_sdpa_flash": ci.ratio if ci else None,
                      f"{mode}_vs_sdpa_flash_lo": ci.lo if ci else None,
                      f"{mode}_vs_sdpa_flash_hi": ci.hi if ci else None,
                      f"{mode}_n": len(data.lat(impl, shape, mode)) if med else 0,
                      f"{mode}_stopped_by": srow.get("stopped_by") if srow else None,
                      f"{mode}_input_sets": srow.get("input_sets") if srow else None})
        rows.append(r)
    return pd.DataFrame(rows)


def noise_floor(rec) -> pd.DataFrame:
    """The A/A twin (`<impl>__aa`) against its original, per shape and mode (BH across rows)."""
    data = run_data(rec)
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


def gpu_of_replicates(data: RunData) -> dict[int, str]:
    """{replicate: its GPU's UUID (else its index)} where the run's replicates name two GPUs or more; {}
    otherwise (one GPU, or a run recorded before replicates named theirs)."""
    gpus = {i: str(g.get("gpu_uuid") or g.get("gpu_index")) for i, g in data.replicate_gpus.items()}
    return gpus if len(set(gpus.values())) >= 2 else {}


def resumed_elsewhere(data: RunData) -> bool:
    """Whether a run's replicates name two GPUs or more though it ran one GPU at a time (its GPUS, settled at its
    start, was 1): a run resumed on another machine (lab.studies.resume), not one spread over a host's GPUs."""
    return bool(gpu_of_replicates(data)) and str(data.params.get("gpus", "")) == "1"


def gpu_split_table(data: RunData) -> list[list]:
    """Per measured shape, where two GPUs or more ran two replicates or more each: how many (impl, mode)
    rows, the median over them of the SD between GPUs and between processes on one GPU (% of the
    median), and how many rows vary more between GPUs (lab.measure.stats.gpu_split)."""
    gpu_of = gpu_of_replicates(data)
    if not gpu_of or min(Counter(gpu_of.values()).values()) < 2:
        return []
    rows = []
    for shape in data.measured_shapes:
        splits = [stats.gpu_split(reps, gpu_of) for mode in data.modes for impl in data.impls(shape)
                  if set(reps := data.reps(impl, shape, mode) or {}) == set(gpu_of)]
        if splits:
            rows.append([shape_label(shape), len(splits),
                         fmt(float(np.median([math.sqrt(v.between_gpus) * 100 for v in splits])), 2),
                         fmt(float(np.median([math.sqrt(v.between_processes) * 100 for v in splits])), 2),
                         f"{sum(v.between_gpus > v.between_processes for v in splits)} of {len(splits)}"])
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
    out["throttled"] = int(records.dropped(raw).sum())
    out["sustained"], out["sustained_thermal"] = 0, 0  # sustained samples; those kept under the driver's thermal slowdown
    if "mode" in raw.columns and "clock_reasons" in raw.columns:
        sus = raw[raw["mode"] == "sustained"]
        reasons = pd.to_numeric(sus["clock_reasons"], errors="coerce").fillna(0).astype("int64")
        thermal = ((reasons & REASON_BITS["SW_THERMAL_SLOWDOWN"]) != 0) & ~records.dropped(sus)
        out["sustained"], out["sustained_thermal"] = int(len(sus)), int(thermal.sum())
    clk = pd.to_numeric(raw["sm_clock_mhz"], errors="coerce").dropna()
    if len(clk):
        out.update(clock_min=float(clk.min()), clock_max=float(clk.max()), clock_median=float(clk.median()))
    out["clock_missing"] = int(len(raw) - len(clk))
    return out


def clock_range(clk) -> str:
    if clk["clock_min"] == clk["clock_max"]:
        return f"constant at {fmt(clk['clock_min'], 0)} MHz"
    return f"{fmt(clk['clock_min'], 0)}–{fmt(clk['clock_max'], 0)} MHz"


def crossval_table(data: RunData) -> tuple[list[list], list[str]]:
    rows, gaps = [], []
    for c in data.crossval or []:
        if "error" in c:
            rows.append([c.get("shape", "?"), c.get("impl", "?"), MISSING, MISSING,
                         "error: " + first_line(c["error"])])
            continue
        ratio = c.get("ratio")
        rows.append([c.get("shape"), c.get("impl"), fmt_us(c.get("harness_us")), fmt_us(c.get("triton_us")),
                     fmt(ratio, 3)])
        if isnum(ratio) and abs(ratio - 1) > XVAL_GAP:
            gaps.append(f"{c.get('shape')}: harness/triton = {ratio:.3f} ({(ratio - 1) * 100:+.1f} %)")
    return rows, gaps


def ncu_crossval_table(data: RunData) -> list[list]:
    """The harness's hot medians against Nsight Compute's gpu__time_duration of the same SDPA
    kernels (a second, independent clock on the device)."""
    rows = []
    if data.profile is None or data.summary is None:
        return rows
    for _, p in data.profile.iterrows():
        if not str(p["impl"]).startswith("sdpa_") or not isnum(p.get("duration_us")):
            continue
        shape = Shape.from_row(p)
        med = data.median(p["impl"], shape, "hot")
        if med is None:
            continue
        rows.append([shape_label(shape), p["impl"], fmt_us(med), fmt_us(p["duration_us"]),
                     fmt(med / p["duration_us"], 3)])
    return rows


# A hot median and Nsight Compute's time per launch of the same launches agree where within this
# (issue 45's target, at every shape of lab.measure.ncu_xval.MIN_US or more).
NCU_AGREE = 0.02


def ncu_xval_table(data: RunData) -> tuple[list[list], list[float]]:
    """The cross-checked peer's hot medians against Nsight Compute's time per launch of the same launches
    (ncu_xval.json): shape, how ncu launched them, hot median, ncu's per launch [bracket], ratio; and the
    ratios, one a shape. Rows in the run's shape order."""
    x = data.ncu_xval or {}
    impl, rows, ratios = x.get("impl"), [], []
    for r in x.get("rows", []):
        shape = Shape.parse(r["shape"])
        hot = data.median(impl, shape, "hot")
        if hot is None or not isnum(r.get("per_launch_us")):
            continue
        how = (f"graphs of {r['launches'][0]}-{r['launches'][-1]} launches, slope" if r["mode"] == "graphs"
               else f"{len(r['launches'])} lone launches, median")
        bracket = "95 % CI" if r["mode"] == "graphs" else "quartiles"
        ratios.append(hot / r["per_launch_us"])
        rows.append([shape_label(shape), how, fmt_us(hot),
                     f"{fmt_us(r['per_launch_us'])} [{fmt_us(r['low_us'])}, {fmt_us(r['high_us'])}] ({bracket})",
                     fmt(ratios[-1], 3)])
    return rows, ratios


# Below this kernel duration a single isolated launch under ncu and the per-launch share of a
# back-to-back graph replay measure different things (the gap between launches, anything else
# the call launches), so only longer kernels cross-validate the harness.
NCU_XVAL_MIN_US = ncu_xval.MIN_US


# ---------------------------------------------------------------------------------------------
# Profiler findings
# ---------------------------------------------------------------------------------------------


# --- rows the time cap stopped ----------------------------------------------------------------


class CappedRow(NamedTuple):
    """A row the time cap stopped: its samples and its median's 95 % CI half-width (a fraction; None: no samples)."""
    impl: str
    shape: str
    mode: str
    n: int
    half_width: float | None


def capped_rows(data: RunData) -> list[CappedRow]:
    """The rows the time cap stopped, the widest median CI first (then in the summary's order)."""
    summ = data.summary
    if summ is None or "stopped_by" not in summ:
        return []
    cap_rows = []
    for r in summ[summ["stopped_by"] == "cap"].itertuples():
        s = Shape.from_row(r)
        x = data.lat(r.impl, s, r.mode)
        half = stats.relative_ci_halfwidth(x) if x is not None and len(x) else None
        cap_rows.append(CappedRow(r.impl, shape_label(s), r.mode, int(r.n), half))
    return sorted(cap_rows, key=lambda c: -(c.half_width if c.half_width is not None else float("inf")))


def wider_than(cap_rows: list[CappedRow], target) -> list[CappedRow]:
    """The capped rows whose median CI half-width exceeds `target` (a fraction; none where it is not a number)."""
    if not isnum(target):
        return []
    return [c for c in cap_rows if c.half_width is not None and c.half_width > target]


def capped_label(c: CappedRow) -> str:
    """One capped row in words, as the report names it."""
    return (f"{c.impl} at {c.shape} {c.mode} (n={c.n}, median CI half-width "
            f"{fmt(c.half_width * 100 if c.half_width is not None else None, 2)} %)")
