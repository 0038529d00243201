"""The report of one run: tables, figures, `OPTIMIZATION_REPORT.md` and a self-contained `ablation.html`.

    python -m lab.report [RUN_ID] [--reports-dir reports] [--runs-root data/runs]

Reads only the run folder (`lab.records.RunRecord`): every number comes from its JSON files,
samples.parquet, summary.csv and profile.csv. The kernel ladder's titles, hypotheses and
predictions come from `kernels/variants/manifest.toml` and the code diffs from the variant files
(whose hashes are checked against the run's build.json). Statistics are recomputed from the raw
samples with `lab.stats` (throttled samples dropped, bootstrap seed 0), so the output is
deterministic: writing twice gives byte-identical Markdown and HTML.

    >>> from lab import records, report
    >>> rec = records.RunRecord.open("20261121T232749Z-c1f7639")
    >>> report.ablation_table(rec)           # one row per variant, ladder order
    >>> report.write(rec, "reports")         # -> reports/OPTIMIZATION_REPORT.md (+ html, figures/)

Hypothesis verdicts (documented in the report as well): the step's profiler metric (manifest
`metric`, mapped through `lab.profile.HYPOTHESIS_METRICS`) is compared between the parent and the
step at the profiled shape matching the headline shape.
  confirmed    the metric moved the predicted way by more than 5 % (relative) AND the speedup over
               the parent is "faster" (or "within noise" where the predicted range includes 1.0);
  refuted      the metric moved the other way by more than 5 %, or the speedup is "slower";
  inconclusive anything else; "inconclusive (no profile)" where either profile value is missing.
"""

from __future__ import annotations

import argparse
import base64
import difflib
import html
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from lab import records, stats
from lab.run import AA_SUFFIX, Shape, shape_set, shapes_from

HEADLINE = Shape(4, 16, 4096, 64, False)
PEER = "sdpa_flash"
DPI = 110
METRIC_MOVE = 0.05  # relative move of a hypothesis metric that counts as "moved"
XVAL_GAP = 0.03  # cross-validation ratio further than this from 1 is listed as a threat
KEYS = ["B", "H", "S", "D", "causal"]
FIGURES = {
    "latency": "latency_ecdf.png",
    "speedup": "speedup.png",
    "roofline": "roofline.png",
    "sweep": "tflops_vs_S.png",
    "stalls": "warp_stalls.png",
}
MISSING = "—"

# Profiler quantities the "top findings" look at: (column, label, unit, floor added before the log ratio)
FINDING_METRICS = (
    ("bank_conflict_pct", "shared-memory bank conflicts", "% of shared wavefronts", 1.0),
    ("tensor_pipe_active", "tensor-pipe activity", "% of peak", 1.0),
    ("global_sectors_per_request", "sectors per global load request", "", 0.5),
    ("stall_barrier", "barrier stalls", "warps per issue", 0.1),
    ("stall_short_scoreboard", "short-scoreboard (shared-memory/MIO) stalls", "warps per issue", 0.1),
    ("stall_long_scoreboard", "long-scoreboard (global-memory) stalls", "warps per issue", 0.1),
    ("stall_wait", "wait (fixed-latency dependency) stalls", "warps per issue", 0.1),
    ("stall_mio_throttle", "MIO-throttle stalls", "warps per issue", 0.1),
    ("stall_math_pipe_throttle", "math-pipe-throttle stalls", "warps per issue", 0.1),
    ("achieved_occupancy", "achieved occupancy", "% of peak warps", 1.0),
    ("dram_throughput_pct", "DRAM throughput", "% of peak", 1.0),
)


# ---------------------------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------------------------


def _isnum(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and math.isfinite(x)


def fmt(x, nd: int = 2, suffix: str = "") -> str:
    return f"{x:.{nd}f}{suffix}" if _isnum(x) else MISSING


def fmt_us(x) -> str:
    """Median latencies: two decimals of a microsecond, no thousands separator."""
    return fmt(x, 2)


def fmt_ratio(x) -> str:
    if not _isnum(x):
        return MISSING
    return f"{x:.4f}" if abs(x) < 0.1 else f"{x:.3f}"


def fmt_ci(ratio, lo, hi) -> str:
    if not _isnum(ratio):
        return MISSING
    return f"{fmt_ratio(ratio)}× [{fmt_ratio(lo)}, {fmt_ratio(hi)}]"


def fmt_p(p) -> str:
    if not _isnum(p):
        return MISSING
    return f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}"


def fmt_g(x, nd: int = 3) -> str:
    """A profiler value: a few significant digits."""
    if not _isnum(x):
        return MISSING
    if x == 0:
        return "0"
    if abs(x) >= 1e6:
        return f"{x:.3g}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.{nd}g}"


def shape_label(shape: Shape) -> str:
    return str(shape)


def _md_cell(x) -> str:
    return str(x).replace("\n", " ").replace("|", "\\|")


def md_table(headers: list[str], rows: list[list], align: str | None = None) -> str:
    align = align or "l" * len(headers)
    sep = ["---:" if a == "r" else ":---:" if a == "c" else "---" for a in align]
    lines = ["| " + " | ".join(_md_cell(h) for h in headers) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# The run's data
# ---------------------------------------------------------------------------------------------


def _as_shape(shape) -> Shape:
    if isinstance(shape, Shape):
        return shape
    parts = tuple(shape)
    return Shape(*(int(p) for p in parts[:4]), causal=bool(parts[4]) if len(parts) > 4 else False)


@dataclass
class RunData:
    """Everything the report reads from one run folder, loaded once; what is missing is noted."""

    rec: records.RunRecord
    missing: list[str] = field(default_factory=list)
    _speedups: dict = field(default_factory=dict)

    def __post_init__(self):
        rec = self.rec
        self.run_id = rec.run_id
        self.env = self._json("env.json", {})
        self.params = self._json("params.json", {})
        self.status = self._json("status.json", {"state": "unknown"})
        self.stages = self._json("stages.json", {}, quiet=True)
        self.build = self._json("build.json", {})
        self.excluded = self._json("excluded.json", {}) or {}
        self.crossval = self._json("crossval.json", [])
        self.shape_notes = self._json("shapes.json", [])
        self.profile_status = self._json("profile_status.json", None)
        ceil = self._json("ceilings.json", None)
        self.ceilings_error = None
        if isinstance(ceil, dict) and _isnum(ceil.get("tensor_tflops")) and _isnum(ceil.get("dram_gbps")):
            self.ceilings = ceil
        else:
            self.ceilings = None
            if isinstance(ceil, dict) and ceil.get("error"):
                self.ceilings_error = str(ceil["error"])
                self.missing.append(f"ceilings.json holds no ceilings: the measurement failed ({self.ceilings_error})")
            elif ceil is not None:
                self.missing.append("ceilings.json has no tensor_tflops/dram_gbps")

        raw = self._table("samples.parquet")
        if raw is None:
            raw = pd.DataFrame(columns=records.SAMPLE_COLUMNS)
        self.raw_samples = raw
        thr = raw["throttled"].fillna(False).astype(bool) if len(raw) else pd.Series([], dtype=bool)
        self.samples = raw[~thr.to_numpy()] if len(raw) else raw
        self._lat: dict = {}
        if len(self.samples):
            cols = ["impl", *KEYS, "mode"]
            for key, grp in self.samples.groupby(cols, sort=False):
                impl, B, H, S, D, causal, mode = key
                self._lat[(impl, Shape(int(B), int(H), int(S), int(D), bool(causal)), mode)] = \
                    grp["latency_us"].to_numpy(dtype=float)
        self.summary = self._table("summary.csv")
        prof = self._table("profile.csv", quiet=True)
        self.profile_note = None
        if prof is None:
            if self.profile_status and not self.profile_status.get("ok", False):
                self.profile_note = f"profiling did not run: {self.profile_status.get('reason', 'no reason recorded')}"
            else:
                self.profile_note = "profile.csv is missing: no profiler metrics for this run"
            self.missing.append(self.profile_note)
            self.profile = None
        else:
            if "ok" in prof.columns:
                prof = prof[prof["ok"].astype(str).str.lower().isin(["true", "1", "1.0"])]
            prof = prof.reset_index(drop=True)
            if "global_load_requests" in prof.columns:
                # No global load instructions (every load by TMA): sectors per request is undefined,
                # not the 0 that runs recorded before lab.profile said so.
                none = pd.to_numeric(prof["global_load_requests"], errors="coerce") == 0
                for col in ("global_sectors_per_request", "global_load_sectors_per_request"):
                    if col in prof.columns:
                        prof.loc[none, col] = float("nan")
            self.profile = prof
            self.profile_failed = self._table("profile.csv", quiet=True)
            if self.profile_status is None:
                self.missing.append("profile_status.json is missing")
            elif not self.profile_status.get("ok", False):
                self.profile_note = ("profiling stopped early: " + str(self.profile_status.get("reason", "no reason")))
                self.missing.append(self.profile_note)
            if not len(self.profile):
                self.missing.append("profile.csv has no successfully profiled kernel")
        for name, why in self.excluded.items():
            self.missing.append(f"variant {name} was excluded from timing: {_first_line(why)}")

    # -- reading ---------------------------------------------------------------------------

    def _read(self, name, reader, default, quiet=False):
        """A run file through `reader`, or `default` with the reason noted as missing."""
        if not self.rec.has(name):
            if not quiet:
                self.missing.append(f"{name} is missing")
            return default
        try:
            return reader(name)
        except Exception as exc:  # noqa: BLE001 - a broken file is reported, not fatal
            self.missing.append(f"{name} could not be read ({type(exc).__name__}: {exc})")
            return default

    def _json(self, name, default, quiet=False):
        return self._read(name, self.rec.read_json, default, quiet)

    def _table(self, name, quiet=False):
        return self._read(name, self.rec.read_table, None, quiet)

    # -- identities ------------------------------------------------------------------------

    @property
    def variants(self) -> list[str]:
        """The run's variants in ladder (manifest) order; ones the manifest lacks go last."""
        run_names = list(self.params.get("variants") or [])
        ladder = [v.name for v in _manifest()]
        if not run_names:
            run_names = ladder
        return [n for n in ladder if n in run_names] + [n for n in run_names if n not in ladder]

    @property
    def shapes(self) -> list[Shape]:
        out = [Shape(*s) for s in self.params.get("shapes", [])]
        for (_, shape, _) in self._lat:
            if shape not in out:
                out.append(shape)
        return out

    @property
    def measured_shapes(self) -> list[Shape]:
        have = {shape for (_, shape, _) in self._lat}
        return [s for s in self.shapes if s in have]

    @property
    def modes(self) -> list[str]:
        modes = list(self.params.get("modes") or [])
        for (_, _, mode) in self._lat:
            if mode not in modes:
                modes.append(mode)
        return modes

    def impls(self, shape: Shape | None = None) -> list[str]:
        """Every implementation measured (at `shape`): variants, A/A twins, then SDPA backends."""
        present = [impl for (impl, s, _) in self._lat if shape is None or s == shape]
        present = list(dict.fromkeys(present))
        order = [v for v in self.variants if v in present]
        order += [i for i in present if i.endswith(AA_SUFFIX) and i not in order]
        backends = [f"sdpa_{b}" for b in self.params.get("backends", [])]
        order += [b for b in backends if b in present]
        order += sorted(i for i in present if i not in order)
        return order

    def headline(self) -> Shape | None:
        shapes = self.measured_shapes or self.shapes
        if not shapes:
            return None
        return HEADLINE if HEADLINE in shapes else shapes[0]

    # -- statistics ------------------------------------------------------------------------

    def lat(self, impl: str, shape: Shape, mode: str) -> np.ndarray | None:
        return self._lat.get((impl, shape, mode))

    def median(self, impl, shape, mode):
        x = self.lat(impl, shape, mode)
        return float(np.median(x)) if x is not None and len(x) else None

    def speedup(self, impl, base, shape, mode) -> stats.SpeedupCI | None:
        """Speedup of impl over base (median(base)/median(impl)) with its 95 % BCa CI, seed 0."""
        a, b = self.lat(impl, shape, mode), self.lat(base, shape, mode)
        if a is None or b is None:
            return None
        key = (impl, base, shape, mode)
        if key not in self._speedups:
            self._speedups[key] = stats.speedup_ci(a, b, seed=0)
        return self._speedups[key]

    def fastest_sdpa(self, shape, mode) -> str | None:
        """The SDPA backend with the lowest median (sdpa_default, the dispatcher, only if alone)."""
        cands = [i for i in self.impls(shape) if i.startswith("sdpa_") and self.lat(i, shape, mode) is not None]
        explicit = [i for i in cands if i != "sdpa_default"] or cands
        if not explicit:
            return None
        return min(explicit, key=lambda i: (self.median(i, shape, mode), i))

    def summary_row(self, impl, shape, mode) -> dict | None:
        if self.summary is None:
            return None
        s = self.summary
        sel = s[(s["impl"] == impl) & (s["B"] == shape.B) & (s["H"] == shape.H) & (s["S"] == shape.S)
                & (s["D"] == shape.D) & (s["causal"].astype(bool) == shape.causal) & (s["mode"] == mode)]
        return sel.iloc[0].to_dict() if len(sel) else None

    # -- profile ---------------------------------------------------------------------------

    def profile_shape_for(self, shape: Shape) -> Shape | None:
        """The profiled shape standing for `shape`: itself, else same S and D non-causal (largest
        B*H, as lab.run.profile_shapes picks), else same S and D causal."""
        if self.profile is None or not len(self.profile):
            return None
        p = self.profile
        shapes = list(dict.fromkeys(Shape(int(r.B), int(r.H), int(r.S), int(r.D), _bool(r.causal))
                                    for r in p.itertuples()))
        if shape in shapes:
            return shape
        same = [s for s in shapes if s.S == shape.S and s.D == shape.D]
        for causal in (False, True):
            c = sorted((s for s in same if s.causal == causal), key=lambda s: (-s.B * s.H, s.B))
            if c:
                return c[0]
        return None

    def profile_row(self, impl: str, pshape: Shape | None) -> dict | None:
        if pshape is None or self.profile is None:
            return None
        p = self.profile
        sel = p[(p["impl"] == impl) & (p["B"] == pshape.B) & (p["H"] == pshape.H) & (p["S"] == pshape.S)
                & (p["D"] == pshape.D) & (p["causal"].map(_bool) == pshape.causal)]
        return sel.iloc[0].to_dict() if len(sel) else None

    def profile_failure(self, impl: str, pshape: Shape | None) -> str | None:
        p = getattr(self, "profile_failed", None)
        if p is None or pshape is None or "reason" not in p.columns:
            return None
        sel = p[(p["impl"] == impl) & (p["S"] == pshape.S) & (p["D"] == pshape.D)]
        sel = sel[~sel["ok"].astype(str).str.lower().isin(["true", "1", "1.0"])]
        return str(sel.iloc[0]["reason"]) if len(sel) else None


def _bool(x) -> bool:
    if isinstance(x, str):
        return x.strip().lower() in ("true", "1", "1.0")
    return bool(x)


def _first_line(text) -> str:
    text = str(text).strip()
    line = text.splitlines()[0] if text else ""
    return line[:300]


def _manifest():
    from lab import variants

    try:
        return variants.manifest()
    except Exception:  # noqa: BLE001 - a broken manifest leaves titles out, not the report
        return ()


def _titled(v) -> str:
    """A step's title, marked where it only builds for one architecture."""
    return v.title if v.arch == "portable" else f"{v.title} [{v.arch} only]"


def _variant(name):
    for v in _manifest():
        if v.name == name:
            return v
    return None


def _data(rec) -> RunData:
    return rec if isinstance(rec, RunData) else RunData(rec)


def _num(x):
    return float(x) if _isnum(x) else None


# ---------------------------------------------------------------------------------------------
# The ablation table
# ---------------------------------------------------------------------------------------------


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
    """The rule stated in the module docstring and in the report."""
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
    """One row per variant in ladder order at `shape` (default: the headline shape)."""
    return _ablation(_data(rec), shape, mode)


def _ablation(data: RunData, shape=None, mode: str = "hot") -> pd.DataFrame:
    shape = _as_shape(shape) if shape is not None else data.headline()
    names = data.variants
    pshape = data.profile_shape_for(shape) if shape is not None else None
    best = data.fastest_sdpa(shape, mode) if shape is not None else None
    tensor_peak = data.ceilings["tensor_tflops"] if data.ceilings else None
    hyp_map = _hypothesis_metrics()

    # vs parent: one family of hypotheses, BH-corrected together
    pairs, pair_idx = [], {}
    for name in names:
        v = _variant(name)
        parent = v.parent if v else ""
        if shape is None or not parent:
            continue
        a, b = data.lat(name, shape, mode), data.lat(parent, shape, mode)
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
        med = float(np.median(lat)) if lat is not None else None
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
    from lab import variants

    out = abl.copy()
    out["judged_at"] = ""
    manifest = {v.name: v for v in _manifest()}
    by_shape: dict = {}
    for i, r in enumerate(abl.itertuples()):
        spec = variants.judged_shape(manifest[r.variant]) if r.variant in manifest else None
        shape = _as_shape(spec) if spec else None
        if shape is None or shape not in data.measured_shapes or shape_label(shape) == abl.attrs.get("shape"):
            continue
        if shape not in by_shape:
            by_shape[shape] = _ablation(data, shape, mode).set_index("variant", drop=False)
        row = by_shape[shape].loc[r.variant].copy()
        row["judged_at"] = shape_label(shape)
        out.iloc[i] = row[out.columns]
    return out


def _hypothesis_metrics() -> dict:
    try:
        from lab.profile import HYPOTHESIS_METRICS

        return dict(HYPOTHESIS_METRICS)
    except Exception:  # noqa: BLE001
        return {}


# ---------------------------------------------------------------------------------------------
# Per-shape tables, noise floor, clocks, cross-validation
# ---------------------------------------------------------------------------------------------


def shape_group(shape: Shape) -> str:
    for name in ("canonical", "large", "sweep"):
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
                a, b = data.lat(impl, shape, mode), data.lat(base, shape, mode)
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
        lat = data._lat.get((p["impl"], Shape(int(p["B"]), int(p["H"]), int(p["S"]), int(p["D"]),
                                              bool(p["causal"])), "hot"))
        if lat is None or not len(lat):
            continue
        med = float(np.median(lat))
        shape = Shape(int(p["B"]), int(p["H"]), int(p["S"]), int(p["D"]), bool(p["causal"]))
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


# lab.variants.METRICS (a hypothesis's metric) -> the FINDING_METRICS column that shows it best
FINDING_FOR_HYPOTHESIS = {
    "global_load_sectors_per_request": "global_sectors_per_request",
    "shared_bank_conflicts": "bank_conflict_pct",
    "stall_barrier": "stall_barrier",
    "stall_long_scoreboard": "stall_long_scoreboard",
    "stall_wait": "stall_wait",
    "tensor_pipe_active": "tensor_pipe_active",
    "dram_throughput": "dram_throughput_pct",
    "achieved_occupancy": "achieved_occupancy",
}


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
    """The steps with the largest profiler moves (their two largest, the hypothesis metric first
    when it is one of them), then the last step against the fastest profiled SDPA kernel; all at
    the profiled shape standing for the headline shape."""
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
    last = next((r for r in reversed(list(abl.itertuples())) if data.profile_row(r.variant, pshape)), None)
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


# ---------------------------------------------------------------------------------------------
# The success bar against SDPA
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


def _figure(figsize):
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, dpi=DPI)


def _style():
    import matplotlib
    import seaborn as sns

    rc = dict(sns.axes_style("whitegrid"))
    rc.update({"font.family": "DejaVu Sans", "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9,
               "legend.fontsize": 8, "xtick.labelsize": 8, "ytick.labelsize": 8, "svg.hashsalt": "lab",
               "path.simplify": True})
    return matplotlib.rc_context(rc)


def _save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=DPI, metadata={"Software": None}, bbox_inches=None)
    return path


def _palette(names: list[str]) -> dict:
    import seaborn as sns

    colors = sns.color_palette("tab10", 10) + sns.color_palette("Set2", 8)
    return {n: colors[i % len(colors)] for i, n in enumerate(names)}


def figure_latency(data: RunData, shape: Shape, path: Path, mode="hot") -> str | None:
    impls = [i for i in data.impls(shape) if data.lat(i, shape, mode) is not None]
    if not impls:
        return f"no {mode} samples at {shape_label(shape)}: latency figure skipped"
    with _style():
        fig = _figure((11.0, 4.6))
        ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.25, 1]})
        pal = _palette(impls)
        for impl in impls:
            x = np.sort(data.lat(impl, shape, mode))
            y = np.arange(1, len(x) + 1) / len(x)
            style = dict(where="post", color=pal[impl], lw=1.5, ls="--" if impl.endswith(AA_SUFFIX) else "-")
            ax.step(x, y, label=f"{impl} (n={len(x)}, median {np.median(x):.1f} µs)", **style)
            ax2.step((x / np.median(x) - 1) * 100, y, **style)
        ax.set_xscale("log")
        ax.set_xlabel(f"latency per launch, µs (log scale; {mode})")
        ax.set_ylabel("fraction of samples ≤ x")
        ax.set_title("ECDF of latency")
        ax2.set_xlabel("deviation from the implementation's own median, %")
        ax2.axvline(0, color="black", lw=0.8)
        ax2.set_title("ECDF of latency / median (spread)")
        ax2.set_yticklabels([])
        fig.legend(*ax.get_legend_handles_labels(), loc="center left", bbox_to_anchor=(0.705, 0.5), frameon=False)
        fig.suptitle(f"Latency distributions at {shape_label(shape)} ({mode}, throttled samples dropped)",
                     fontsize=10)
        fig.subplots_adjust(left=0.06, right=0.70, bottom=0.12, top=0.86, wspace=0.06)
        _save(fig, path)
    return None


def figure_speedup(abl: pd.DataFrame, path: Path) -> str | None:
    if abl.empty or not abl["vs_sdpa_flash"].notna().any() and not abl["vs_parent"].notna().any():
        return "no speedups to plot"
    with _style():
        fig = _figure((10.0, 4.2))
        axes = fig.subplots(1, 2)
        panels = (("vs_parent", "speedup over parent step", "tab:blue"),
                  ("vs_sdpa_flash", f"speedup over {PEER}", "tab:orange"))
        labels = [f"{int(s)}. {t}" if _isnum(s) else t for s, t in zip(abl["step"], abl["variant"])]
        for ax, (col, title, color) in zip(axes, panels):
            y = np.arange(len(abl))[::-1]
            vals = abl[col].to_numpy(dtype=float)
            lo = abl[col + "_lo"].to_numpy(dtype=float)
            hi = abl[col + "_hi"].to_numpy(dtype=float)
            ok = np.isfinite(vals)
            ax.errorbar(vals[ok], y[ok], xerr=[vals[ok] - lo[ok], hi[ok] - vals[ok]], fmt="o", color=color,
                        ecolor="black", elinewidth=1.2, capsize=4, ms=6)
            for yi, v in zip(y[ok], vals[ok]):
                ax.annotate(f"{fmt_ratio(v)}×", (v, yi), textcoords="offset points", xytext=(0, 7), ha="center",
                            fontsize=7)
            for yi in y[~ok]:
                ax.annotate("n/a", (1.0, yi), ha="center", va="center", fontsize=7, color="grey")
            ax.axvline(1.0, color="black", lw=1, ls="--")
            ax.set_xscale("log")
            ax.set_yticks(y)
            ax.set_yticklabels(labels if ax is axes[0] else [""] * len(labels))
            ax.set_ylim(-0.7, len(abl) - 0.3)
            finite = np.concatenate([lo[ok], hi[ok], [1.0]])
            ax.set_xlim(finite.min() / 1.6, finite.max() * 1.6)
            ax.set_title(title + " (95 % BCa CI; > 1 = faster)")
            ax.set_xlabel("ratio of medians (log scale)")
        shape = abl.attrs.get("shape") or ""
        fig.suptitle(f"Ablation at {shape}, {abl.attrs.get('mode', 'hot')}", fontsize=10)
        fig.subplots_adjust(left=0.15, right=0.98, bottom=0.14, top=0.85, wspace=0.08)
        _save(fig, path)
    return None


def figure_roofline(data: RunData, path: Path) -> str | None:
    if data.ceilings is None:
        return "no measured ceilings (ceilings.json): roofline skipped"
    if data.profile is None or not len(data.profile):
        return "no profile data: roofline skipped"
    p = data.profile.copy()
    p = p[pd.to_numeric(p.get("achieved_tflops"), errors="coerce").notna()
          & pd.to_numeric(p.get("arithmetic_intensity"), errors="coerce").notna()]
    if not len(p):
        return "profile.csv has no achieved_tflops/arithmetic_intensity values: roofline skipped"
    peak, bw = data.ceilings["tensor_tflops"], data.ceilings["dram_gbps"]
    ridge = peak * 1e12 / (bw * 1e9)
    ai = p["arithmetic_intensity"].astype(float)
    xs = np.geomspace(min(ai.min(), ridge) / 8, max(ai.max(), ridge) * 8, 200)
    impls = [i for i in data.impls() if i in set(p["impl"])] + sorted(set(p["impl"]) - set(data.impls()))
    pshapes = list(dict.fromkeys(Shape(int(r.B), int(r.H), int(r.S), int(r.D), _bool(r.causal))
                                 for r in p.itertuples()))
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    with _style():
        fig = _figure((9.0, 5.4))
        ax = fig.subplots()
        ax.plot(xs, np.minimum(peak, xs * bw / 1e3), color="black", lw=1.5,
                label=f"roofline: {peak:.0f} TFLOP/s,\n{bw:.0f} GB/s, ridge {ridge:.0f} FLOP/B")
        ax.axvline(ridge, color="grey", lw=0.8, ls=":")
        pal = _palette(impls)
        for impl in impls:
            for k, ps in enumerate(pshapes):
                sel = p[(p["impl"] == impl) & (p["S"] == ps.S) & (p["D"] == ps.D) & (p["B"] == ps.B)
                        & (p["H"] == ps.H)]
                if len(sel):
                    ax.scatter(sel["arithmetic_intensity"], sel["achieved_tflops"], color=pal[impl],
                               marker=markers[k % len(markers)], s=40, edgecolor="black", linewidth=0.4, zorder=3)
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color="black", lw=1.5)]
        names = [ax.get_legend_handles_labels()[1][0]]
        handles += [Line2D([], [], marker="o", ls="", color=pal[i], markeredgecolor="black") for i in impls]
        names += impls
        handles += [Line2D([], [], marker=markers[k % len(markers)], ls="", color="grey") for k in range(len(pshapes))]
        names += [shape_label(s) for s in pshapes]
        ax.legend(handles, names, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity, FLOP per DRAM byte (ncu dram__bytes)")
        ax.set_ylabel("achieved TFLOP/s (ncu duration)")
        ax.set_title("Roofline with the ceilings measured on this GPU")
        fig.subplots_adjust(left=0.09, right=0.62, bottom=0.11, top=0.93)
        _save(fig, path)
    return None


def sweep_groups(data: RunData) -> dict:
    """(D, causal) -> shapes, where at least three sequence lengths were measured."""
    groups: dict = {}
    for s in data.measured_shapes:
        groups.setdefault((s.D, s.causal), []).append(s)
    return {k: sorted(v, key=lambda s: (s.S, s.B, s.H)) for k, v in groups.items()
            if len({s.S for s in v}) >= 3}


def figure_sweep(data: RunData, path: Path, mode="hot") -> str | None:
    groups = sweep_groups(data)
    if not groups:
        seen = sorted({s.S for s in data.measured_shapes})
        return (f"no S sweep in this run (sequence lengths measured: {', '.join(map(str, seen)) or 'none'}; "
                f"a sweep needs at least three per (D, causal)): TFLOP/s-vs-S figure skipped; "
                "`make ablation SHAPES=sweep` measures one")
    keys = sorted(groups)
    impls = data.impls()
    impls = [i for i in impls if not i.endswith(AA_SUFFIX)]
    pal = _palette(impls)
    with _style():
        width = 4.2 * len(keys) + 2.4
        fig = _figure((width, 4.2))
        axes = np.atleast_1d(fig.subplots(1, len(keys), sharey=True))
        for ax, key in zip(axes, keys):
            for impl in impls:
                pts = [(s.S, stats.tflops(*_dims(s), s.causal, data.median(impl, s, mode)))
                       for s in groups[key] if data.median(impl, s, mode)]
                if pts:
                    ax.plot(*zip(*pts), marker="o", ms=3, color=pal[impl], label=impl)
            ax.set_xscale("log", base=2)
            ax.set_title(f"D={key[0]}, {'causal' if key[1] else 'non-causal'}")
            ax.set_xlabel("sequence length S")
        axes[0].set_ylabel(f"TFLOP/s ({mode} median)")
        axes[-1].legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        fig.subplots_adjust(left=0.75 / width, right=1 - 1.7 / width, bottom=0.13, top=0.9, wspace=0.08)
        _save(fig, path)
    return None


def figure_stalls(data: RunData, pshape: Shape | None, path: Path) -> str | None:
    if pshape is None:
        return "no profile data: warp-stall figure skipped"
    rows = [(i, data.profile_row(i, pshape)) for i in data.impls() + sorted(set(data.profile["impl"]))]
    rows = [(i, r) for i, r in dict(rows).items() if r]
    if not rows:
        return f"no profiled kernel at {shape_label(pshape)}: warp-stall figure skipped"
    cols = _stall_columns(data.profile)
    df = pd.DataFrame([{c: _num(r.get(c)) or 0.0 for c in cols} for _, r in rows], index=[i for i, _ in rows])
    order = df.sum().sort_values(ascending=False, kind="stable")
    top = [c for c in order.index[:8] if order[c] > 0]
    rest = [c for c in cols if c not in top]
    plot = df[top].copy()
    if rest:
        plot["other"] = df[rest].sum(axis=1)
    import seaborn as sns

    colors = sns.color_palette("tab10", 10)
    with _style():
        fig = _figure((9.0, 4.6))
        ax = fig.subplots()
        y = np.arange(len(plot))[::-1]
        left = np.zeros(len(plot))
        for k, c in enumerate(plot.columns):
            vals = plot[c].to_numpy()
            ax.barh(y, vals, left=left, color=colors[k % 10], edgecolor="white", lw=0.4,
                    label=c.replace("stall_", ""))
            left += vals
        ax.set_yticks(y)
        ax.set_yticklabels(plot.index)
        ax.set_xlabel("warps stalled per issued instruction (ncu smsp__average_warps_issue_stalled_*)")
        ax.set_title(f"Warp-stall breakdown at {shape_label(pshape)}")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        fig.subplots_adjust(left=0.16, right=0.78, bottom=0.12, top=0.92)
        _save(fig, path)
    return None


# ---------------------------------------------------------------------------------------------
# The Markdown report
# ---------------------------------------------------------------------------------------------


def _shapes_spec(shapes: list[Shape]) -> str:
    for spec in ("canonical,large", "canonical", "large", "sweep", "canonical,large,sweep"):
        if shapes == shapes_from(spec):
            return spec
    return ";".join(f"{s.B},{s.H},{s.S},{s.D}" + (",causal" if s.causal else "") for s in shapes)


def _source_check(data: RunData) -> tuple[list[str], list[str]]:
    """Variants whose working-tree sources hash as the run's build.json says, and those that differ."""
    same, differ = [], []
    try:
        from lab import build

        for name in data.variants:
            v = _variant(name)
            rec_hash = (data.build.get(name) or {}).get("source_hash")
            if v is None or not rec_hash:
                continue
            (same if build.source_hash(v) == rec_hash else differ).append(name)
    except Exception:  # noqa: BLE001 - a check that cannot run is left out
        pass
    return same, differ


@dataclass
class Report:
    markdown: str
    figures: dict
    diffs: list
    title: str
    label: str


def _build(data: RunData, reports_dir: Path) -> Report:
    figdir = reports_dir / "figures"
    figdir.mkdir(parents=True, exist_ok=True)
    env, params = data.env, data.params
    head = data.headline()
    abl = _ablation(data, head, "hot") if head else pd.DataFrame()
    state = data.status.get("state", "unknown")
    gpu = env.get("gpu", "unknown GPU")
    date = env.get("utc", "unknown date")
    label = f"Run {data.run_id} · {gpu} · {date} · state: {state}"
    L: list[str] = []
    add = L.append

    add("# FlashAttention forward kernels: optimization ablation report")
    add("")
    add(f"**{label}**")
    add("")
    if state != "complete":
        done = [k[:-2] for k in data.stages if k.endswith("_s") and k != "total_s"]
        add(f"> This run's status.json says **{state}**: it was not marked complete. Stages recorded in "
            f"stages.json: {', '.join(done) if done else 'none'}. The report uses what the folder holds.")
        add("")
    add(f"Every number below is computed from this run's folder (`{_run_path(data)}`); none is typed in.")
    add("")

    # -- headline --------------------------------------------------------------------------
    add("## Headline")
    add("")
    if head is not None and len(abl) and abl["median_us"].notna().any():
        measured = abl[abl["median_us"].notna()]
        first, last = measured.iloc[0], measured.iloc[-1]
        best = abl.attrs.get("best_sdpa")
        add(f"- Headline shape {shape_label(head)}, hot mode.")
        add(f"- {last['title']} ({last['variant']}), the last measured step: {fmt_us(last['median_us'])} µs, "
            f"{fmt(last['tflops'], 1)} TFLOP/s"
            + (f" ({fmt(last['pct_tensor_peak'], 1)} % of the measured {data.ceilings['tensor_tflops']:.0f} "
               f"TFLOP/s tensor-core ceiling)" if data.ceilings and _isnum(last['pct_tensor_peak']) else "") + ".")
        if first["variant"] != last["variant"]:
            tot = data.speedup(last["variant"], first["variant"], head, "hot")
            if tot:
                add(f"- Whole ladder, {first['variant']} → {last['variant']}: {fmt_ci(tot.ratio, tot.lo, tot.hi)} "
                    f"({fmt_us(first['median_us'])} µs → {fmt_us(last['median_us'])} µs).")
        if _isnum(last["vs_sdpa_flash"]):
            add(f"- Against {PEER}: {fmt_ci(last['vs_sdpa_flash'], last['vs_sdpa_flash_lo'], last['vs_sdpa_flash_hi'])}"
                f" ({PEER} {fmt_us(data.median(PEER, head, 'hot'))} µs); against the fastest SDPA backend here, "
                f"{best}: {fmt_ci(last['vs_best_sdpa'], last['vs_best_sdpa_lo'], last['vs_best_sdpa_hi'])} "
                f"({fmt_us(data.median(best, head, 'hot'))} µs).")
        verdicts = [f"{r.variant}: {r.hypothesis_verdict}" + (f" (at {r.judged_at})" if r.judged_at else "")
                    for r in hypothesis_rows(data, abl).itertuples() if r.parent]
        add(f"- Hypotheses: {'; '.join(verdicts)}.")
    else:
        add("No samples at any shape: there is nothing to report on timing.")
    add("")

    # -- objective -------------------------------------------------------------------------
    add("## Objective")
    add("")
    names = data.variants
    add(f"The ladder has {len(names)} hand-written FlashAttention forward kernels ({', '.join(names)}), each its "
        "parent plus one optimization, with a hypothesis, the profiler metric it should move and a predicted "
        "speedup written down before measuring (`kernels/variants/manifest.toml`). This report measures what "
        "each step bought, whether the profiler saw the predicted mechanism, and how far the last step is from "
        "PyTorch's `scaled_dot_product_attention` (SDPA) backends on the same GPU.")
    arch_specific = [v for v in (_variant(n) for n in names) if v and v.arch != "portable"]
    if arch_specific:
        archs = sorted({v.arch for v in arch_specific})
        add("")
        add(f"Architecture-specific steps ({', '.join(archs)} only; marked so in the tables): "
            + ", ".join(f"{v.index} {v.name}" for v in arch_specific)
            + ". They use instructions other GPUs lack (on sm_90a: wgmma, TMA, setmaxnreg), are built only for that "
            "target and are refused with the reason elsewhere, where the portable steps still build and run.")
    add("")

    # -- environment -----------------------------------------------------------------------
    add("## Environment")
    add("")
    dirty = env.get("git_dirty")
    env_rows = [
        ["GPU", f"{gpu} (compute capability {env.get('compute_capability', MISSING)})"],
        ["SMs", env.get("sm_count", MISSING)],
        ["L2 / device memory", f"{env['l2_bytes'] / 2**20:.0f} MiB / {env['memory_bytes'] / 2**30:.0f} GiB"
         if _isnum(env.get("l2_bytes")) and _isnum(env.get("memory_bytes")) else MISSING],
        ["max SM / memory clock",
         f"{env.get('sm_clock_max_mhz', MISSING)} MHz / {env.get('mem_clock_max_mhz', MISSING)} MHz"],
        ["power limit", f"{env.get('power_limit_w', MISSING)} W"],
        ["driver", env.get("driver", MISSING)],
        ["CUDA runtime (torch)", env.get("cuda_runtime", MISSING)],
        ["nvcc", env.get("nvcc", MISSING)],
        ["torch", env.get("torch", MISSING)],
        ["cuDNN", env.get("cudnn", MISSING)],
        ["Python", env.get("python", MISSING)],
        ["git sha", f"`{env.get('git_sha', MISSING)}`"],
        ["dirty tree", MISSING if dirty is None else ("yes" if dirty else "no")],
        ["run id", f"`{data.run_id}`"],
        ["date (UTC)", date],
        ["run state", state],
    ]
    if data.stages:
        env_rows.append(["stage times", ", ".join(f"{k[:-2]} {v} s" for k, v in data.stages.items()
                                                   if k.endswith("_s") and _isnum(v))])
    add(md_table(["", "value"], env_rows))
    add("")

    # -- methodology -----------------------------------------------------------------------
    add("## Methodology")
    add("")
    summ = data.summary
    sets_txt = MISSING
    if summ is not None and "input_sets" in summ.columns:
        hot = summ[summ["mode"] == "hot"]
        if len(hot):
            per_shape = hot.groupby(KEYS, sort=False)["input_sets"].max()
            rot = [f"{_shape_tuple(k)}: {int(v)}" for k, v in per_shape.items()]
            sets_txt = "; ".join(rot)
    l2 = env.get("l2_bytes")
    add("**Timing modes.** *hot*: back-to-back launches captured in one CUDA graph and replayed; a sample "
        "is one replay's CUDA-event time divided by its launches. Where one set of Q, K, V and O fits in L2"
        + (f" ({l2 / 2**20:.0f} MiB here)" if _isnum(l2) else "")
        + ", the graph rotates through enough input sets to exceed twice the L2, so inputs are not simply "
        f"re-read from it (input sets per shape, from summary.csv: {sets_txt}). *cold*: a buffer of twice the "
        "L2 is overwritten before every launch and a sample is one launch.")
    add("")
    counts = summ["stopped_by"].value_counts().to_dict() if summ is not None and "stopped_by" in summ else {}
    cap_rows = []
    if summ is not None and "stopped_by" in summ:
        for r in summ[summ["stopped_by"] == "cap"].itertuples():
            s = Shape(int(r.B), int(r.H), int(r.S), int(r.D), _bool(r.causal))
            x = data.lat(r.impl, s, r.mode)
            half = stats.relative_ci_halfwidth(x) if x is not None and len(x) else None
            cap_rows.append(f"{r.impl} at {shape_label(s)} {r.mode} (n={r.n}, median CI half-width "
                            f"{fmt(half * 100 if half is not None else None, 2)} %)")
    rel_ci, cap_s = params.get("rel_ci"), params.get("cap_s")
    add("**Sampling and stopping.** Every implementation at a shape is sampled in blocks of 10 in a randomized "
        f"round-robin (seed {params.get('seed', MISSING)} + shape index), so drifts hit all of them alike. A row "
        f"stops when the 95 % CI of its median is within ±{fmt(rel_ci * 100 if _isnum(rel_ci) else None, 1)} % "
        f"of the median (at least {int(params.get('min_samples', 20))} samples)"
        + (f" and its {fmt(params['stop_guard'][0] * 100, 0)} % CI within ±"
           f"{fmt(params['stop_guard'][1] * rel_ci * 100 if _isnum(rel_ci) else None, 1)} % (a guard against a median "
           "that sits between two modes of a multimodal latency distribution)" if params.get("stop_guard") else "")
        + f", or after {fmt(cap_s, 1)} s of sampling. "
        f"Rows stopped by the CI rule: {counts.get('ci', 0)}; by the time cap: {counts.get('cap', 0)}"
        + (f" ({'; '.join(cap_rows)})" if cap_rows else "") + f" (of {0 if summ is None else len(summ)} rows).")
    add("")
    add("**Statistics** (`lab.stats`, recomputed here from samples.parquet with throttled samples dropped). "
        "Each number is a median; a speedup is a ratio of medians, `median(other) / median(this)` (> 1: this is "
        "faster), with a 95 % two-sample BCa bootstrap CI (2000 resamples, seed 0). Effect size is Cliff's δ "
        "(negative: this step's latencies tend to be lower); the test is a two-sided Mann-Whitney U with "
        "Benjamini-Hochberg correction across the rows of a table. A difference is called *faster*/*slower* only "
        "when the corrected p < 0.05 **and** the whole CI lies outside ±1 %; otherwise it is *within noise*.")
    add("")
    nf = noise_floor(data)
    if len(nf):
        dev = (nf["ratio"] - 1).abs().max() * 100
        add(f"**Noise floor.** The last variant is timed twice in the same interleave (`{nf['impl'].iloc[0]}` vs "
            f"`{nf['base'].iloc[0]}`). Over {len(nf)} shape×mode rows its A/A speedup ranges "
            f"{fmt_ratio(nf['ratio'].min())}× to {fmt_ratio(nf['ratio'].max())}× (largest deviation from 1: "
            f"{dev:.2f} %), with CIs from {fmt_ratio(nf['lo'].min())} to {fmt_ratio(nf['hi'].max())}; "
            f"{int((nf['verdict'] != 'within noise').sum())} of {len(nf)} rows are called significant. Per-row "
            "values are in the noise-floor table below.")
    else:
        add("**Noise floor.** No A/A twin (`<impl>" + AA_SUFFIX + "`) was measured in this run: the noise floor "
            "is not known.")
    add("")
    prec = precision_summary(data)
    if prec["total"]:
        wider = "; ".join(f"{w['impl']} at {w['shape']} {w['mode']} (±{w['half_pct']:.2f} %, n={w['n']}, "
                          f"stopped by {w['stopped_by']}; {w['near_median_pct']:.0f} % of its samples within "
                          "±0.5 % of its median)" for w in prec["wider"])
        add(f"**Precision.** Speedup intervals against {PEER} at the canonical shapes: {prec['within']} of "
            f"{prec['total']} lie within ±{PRECISION_BAND * 100:.0f} % of their ratio"
            + (f"; wider: {wider}. Few samples near the median and a wide interval after thousands of samples mark "
               "a multimodal latency distribution whose median falls between two modes; more samples do not "
               "narrow such a median." if wider else "."))
        add("")
    clk = clock_summary(data)
    if clk["n"]:
        clock_txt = (f"SM clock read through NVML at every block of samples: {_clock_range(clk)} (median "
                     f"{fmt(clk['clock_median'], 0)} MHz; the GPU's maximum is "
                     f"{env.get('sm_clock_max_mhz', MISSING)} MHz)" if clk["clock_min"] is not None
                     else "No SM clock readings were recorded (NVML missing)")
        add(f"**Clocks.** {clock_txt}. Samples taken during a thermal or hardware slowdown are flagged and "
            f"dropped: {clk['throttled']} of {clk['n']} ({clk['throttled'] / clk['n'] * 100:.2f} %). The power "
            f"cap ({env.get('power_limit_w', MISSING)} W) is not counted as throttling. Clocks are not locked.")
    else:
        add("**Clocks.** No samples, so no clock readings.")
    add("")
    xrows, xgaps = crossval_table(data)
    if xrows:
        ratios = [c["ratio"] for c in data.crossval if _isnum(c.get("ratio"))]
        add(f"**Cross-validation.** {PEER}'s hot median from this harness against "
            "`triton.testing.do_bench_cudagraph` on one input set, per shape: harness/triton ratios "
            + (f"{min(ratios):.3f} to {max(ratios):.3f}" if ratios else MISSING)
            + (f"; {len(xgaps)} shape(s) differ by more than {XVAL_GAP * 100:.0f} % (see threats)."
               if xgaps else f"; all within {XVAL_GAP * 100:.0f} %."))
        add("")
        add(md_table(["shape", "impl", "harness µs", "triton µs", "ratio"], xrows, "llrrr"))
    else:
        add("**Cross-validation.** crossval.json is missing or empty: the harness was not checked against triton.")
    add("")
    nrows = ncu_crossval_table(data)
    if nrows:
        long_ = [float(r[-1]) for r in nrows if float(r[3]) >= NCU_XVAL_MIN_US]
        short = [float(r[-1]) for r in nrows if float(r[3]) < NCU_XVAL_MIN_US]
        span = lambda xs: f"{min(xs):.3f} to {max(xs):.3f}" if xs else MISSING  # noqa: E731
        add(f"Against Nsight Compute's `gpu__time_duration` of the same SDPA kernels (one launch, clocks not "
            f"controlled), the harness's hot medians (rotating input sets) give ratios {span(long_)} where the "
            f"kernel runs at least {NCU_XVAL_MIN_US:.0f} µs ({len(long_)} pairs). Below that ({len(short)} pairs: "
            f"{span(short)}) the two measure different things: ncu one isolated launch, the hot mode a launch's "
            "share of a back-to-back graph replay, gaps between launches and any other kernel the call launches "
            "included; those rows are listed, not counted as cross-validation.")
        add("")
        add(md_table(["shape", "impl", "harness hot median µs", "ncu duration µs", "ratio"], nrows, "llrrr"))
        add("")
    if params.get("profile_shapes", "distinct") == "all":
        add("**Profiling.** Nsight Compute (`ncu --page raw`, caches flushed between replay passes) over one launch "
            "per implementation at every timed shape; each table says which shape its profile columns come from.")
    else:
        add("**Profiling.** Nsight Compute (`ncu --page raw`, caches flushed between replay passes) over one launch "
            "per implementation for each distinct (S, D), non-causal where there is one (`lab.run.profile_shapes`). "
            "Profile columns therefore come from the profiled shape with the ablation's S and D, which may have "
            "different B and H than the timed shape; each table says which.")
    add("")

    # -- ablation --------------------------------------------------------------------------
    figs: dict = {}
    notes: dict = {}
    if head is not None and len(abl):
        ps = abl.attrs.get("profile_shape")
        best = abl.attrs.get("best_sdpa")
        add(f"## Ablation at {shape_label(head)} (hot)")
        add("")
        add(f"Timing columns: {shape_label(head)}, hot mode. Fastest SDPA backend here: **{best or MISSING}**."
            + (f" Profile columns (tables 2 and 3) come from the profiled shape **{ps}**"
               + (" (the same shape)." if ps == shape_label(head) else " (a different B/H: same S and D).")
               if ps else f" No profile data matches S={head.S}, D={head.D}"
               + (f" ({data.profile_note})" if data.profile_note else "") + "."))
        add("")
        add("**1. Speed.**")
        add("")
        rows = []
        for r in abl.itertuples():
            if r.status != "measured":
                rows.append([_step(r), r.title, r.status] + [MISSING] * 8)
                continue
            rows.append([_step(r), r.title, fmt_us(r.median_us), fmt(r.tflops, 1), fmt(r.pct_tensor_peak, 1),
                         fmt_ci(r.vs_sdpa_flash, r.vs_sdpa_flash_lo, r.vs_sdpa_flash_hi),
                         fmt_ci(r.vs_best_sdpa, r.vs_best_sdpa_lo, r.vs_best_sdpa_hi),
                         fmt_ci(r.vs_parent, r.vs_parent_lo, r.vs_parent_hi) if r.parent else "(reference)",
                         fmt(r.cliffs_delta, 2), fmt_p(r.p_adjusted), r.speed_verdict or MISSING])
        add(md_table(["#", "step", "median µs", "TFLOP/s", "% of tensor ceiling", f"vs {PEER} [95% CI]",
                      f"vs fastest SDPA ({best}) [95% CI]", "vs parent [95% CI]", "Cliff's δ", "p (BH)",
                      "verdict vs parent"], rows, "llrrrrrrrrl"))
        add("")
        if data.ceilings is None:
            add(f"% of tensor ceiling: {MISSING}, no measured ceilings in this run"
                + (f" ({data.ceilings_error})." if data.ceilings_error else "."))
            add("")
        add(f"**2. Profile** at {ps or MISSING}.")
        add("")
        rows = []
        for r in abl.itertuples():
            if r.profile_note:
                rows.append([_step(r), r.title, r.profile_note] + [MISSING] * 6)
                continue
            rows.append([_step(r), r.title, fmt(r.profile_duration_us, 1), fmt(r.dram_gbps, 1),
                         fmt(r.achieved_occupancy, 1), fmt(r.registers, 0),
                         fmt(r.smem_per_block / 1024 if _isnum(r.smem_per_block) else None, 1),
                         fmt_g(r.bank_conflict_pct), fmt_g(r.tensor_pipe_pct)])
        add(md_table(["#", "step", "ncu duration µs", "DRAM GB/s", "achieved occupancy %", "registers/thread",
                      "smem/block KiB", "bank conflicts %", "tensor pipe %"], rows, "llrrrrrrr"))
        add("")
        hyp = hypothesis_rows(data, abl)
        add(f"**3. Hypotheses** (metric values at {ps or MISSING}"
            + ("; a step whose manifest names a `judged_at` shape is judged there, as its row says"
               if (hyp.judged_at != "").any() else "") + ").")
        add("")
        rows = []
        for r in hyp.itertuples():
            pred = f"{fmt(r.predicted_lo, 2)}–{fmt(r.predicted_hi, 2)}×" if _isnum(r.predicted_lo) else MISSING
            move = (f"{fmt_g(r.metric_parent)} → {fmt_g(r.metric_value)}"
                    + (f" ({r.metric_change_pct:+.1f} %)" if _isnum(r.metric_change_pct) else
                       " (from 0)" if r.metric_change_pct is not None and r.metric_parent == 0 and r.metric_value
                       else "")) if r.parent else f"{fmt_g(r.metric_value)} (reference)"
            measured = fmt_ci(r.vs_parent, r.vs_parent_lo, r.vs_parent_hi) if r.parent else MISSING
            if r.judged_at:
                move = f"at {r.judged_at}: {move}"
                measured = f"at {r.judged_at}: {measured}"
            rows.append([_step(r), r.title, r.change, r.hypothesis, f"{r.metric} ({r.direction})", move, pred,
                         measured + (f", {r.vs_prediction} the predicted range" if r.vs_prediction != MISSING else ""),
                         f"**{r.hypothesis_verdict}**"])
        add(md_table(["#", "step", "change", "hypothesis", "predicted metric (direction)", "parent → this step",
                      "predicted speedup", "measured vs parent", "verdict"], rows))
        add("")
        add(f"Verdict rule: **confirmed** when the hypothesis metric moved the predicted way by more than "
            f"{METRIC_MOVE * 100:.0f} % (relative, parent → step) and the step is *faster* than its parent (or "
            f"*within noise* where the predicted range includes 1.0); **refuted** when the metric moved the other "
            f"way by more than {METRIC_MOVE * 100:.0f} % or the step is *slower*; **inconclusive** otherwise; "
            "**inconclusive (no profile)** when either profile value is missing. The metric comes from the "
            "manifest's `metric`, mapped to a profile.csv column by `lab.profile.HYPOTHESIS_METRICS`. "
            "\"Below/within/above the predicted range\" compares the speedup's CI with the predicted range.")
        add("")
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
        notes["speedup"] = figure_speedup(abl, figdir / FIGURES["speedup"])
        notes["latency"] = figure_latency(data, head, figdir / FIGURES["latency"])
        for key, caption in (("speedup", "Speedup of each step over its parent and over " + PEER
                              + " (95 % BCa CI; dashed line at 1.0)"),
                             ("latency", f"Hot latency distributions at {shape_label(head)}")):
            _figure_md(add, figs, notes, key, caption, figdir)

    # -- the success bar -------------------------------------------------------------------
    best = bar_step(data)
    bar = success_bar(data, best) if best else []
    if bar:
        add(f"## Against SDPA: the bar")
        add("")
        add(f"The bar the study set itself: the last measured step, {best}, against {PEER} (FlashAttention-2), "
            "measured by this harness. " + bar_rule() + " Where a part is missed, the launch shape and the profiler say "
            "what stands in the way.")
        add("")
        for line in bar:
            add(line)

    # -- per-shape -------------------------------------------------------------------------
    add("## Per-shape results")
    add("")
    add(f"Every implementation at every measured shape: medians (µs), TFLOP/s and the speedup over {PEER} with "
        "its 95 % CI, hot and cold. `__aa` is the A/A twin.")
    add("")
    groups: dict = {}
    for s in data.measured_shapes:
        groups.setdefault(shape_group(s), []).append(s)
    not_measured = [s for s in data.shapes if s not in data.measured_shapes]
    modes = [m for m in ("hot", "cold") if m in data.modes] + [m for m in data.modes if m not in ("hot", "cold")]
    for gname in ("canonical", "large", "sweep", "other"):
        if gname not in groups:
            continue
        add(f"### {gname.capitalize()} shapes")
        add("")
        for s in groups[gname]:
            t = _shape_table(data, s)
            add(f"#### {shape_label(s)}")
            add("")
            headers, align = ["impl"], "l"
            for m in modes:
                headers += [f"{m} median µs", f"{m} TFLOP/s", f"{m} vs {PEER} [95% CI]", f"{m} n"]
                align += "rrrr"
            rows = []
            for r in t.to_dict("records"):
                row = [r["impl"]]
                for m in modes:
                    stop = r.get(f"{m}_stopped_by")
                    row += [fmt_us(r[f"{m}_median_us"]), fmt(r[f"{m}_tflops"], 1),
                            fmt_ci(r[f"{m}_vs_sdpa_flash"], r[f"{m}_vs_sdpa_flash_lo"], r[f"{m}_vs_sdpa_flash_hi"])
                            if r["impl"] != PEER else "(reference)",
                            f"{r[f'{m}_n']}" + (" (cap)" if stop == "cap" else "")]
                rows.append(row)
            add(md_table(headers, rows, align))
            extra = _shape_notes(data, s)
            if extra:
                add("")
                add(extra)
            add("")
    if not_measured:
        add("Shapes in params.json with no samples: " + "; ".join(shape_label(s) for s in not_measured) + ".")
        add("")
    if not data.measured_shapes:
        add("No samples were recorded (samples.parquet missing or empty).")
        add("")

    # noise floor table
    add("### Noise floor (A/A)")
    add("")
    if len(nf):
        add(md_table(["shape", "mode", "A/A pair", "speedup [95% CI]", "p (BH)", "verdict"],
                     [[r.shape, r.mode, f"{r.impl} vs {r.base}", fmt_ci(r.ratio, r.lo, r.hi), fmt_p(r.p_adjusted),
                       r.verdict] for r in nf.itertuples()], "llllrl"))
    else:
        add("No A/A twin was measured.")
    add("")

    # -- sweep -----------------------------------------------------------------------------
    add("## TFLOP/s against sequence length")
    add("")
    notes["sweep"] = figure_sweep(data, figdir / FIGURES["sweep"])
    _figure_md(add, figs, notes, "sweep", "TFLOP/s (hot median) against S", figdir)

    # -- profiler findings -----------------------------------------------------------------
    add("## Top 3 profiler findings")
    add("")
    pshape = data.profile_shape_for(head) if head else None
    findings = profiler_findings(data, abl) if len(abl) else []
    if findings:
        add(f"At the profiled shape {shape_label(pshape)}, computed from profile.csv (the largest relative move of "
            "the tracked metrics between neighbouring steps, and the last step against the fastest profiled SDPA "
            "kernel):")
        add("")
        for i, f in enumerate(findings, 1):
            add(f"{i}. {f}")
    else:
        add("No profiler findings: " + (data.profile_note or "no profiled kernels match the headline shape") + ".")
    add("")
    notes["roofline"] = figure_roofline(data, figdir / FIGURES["roofline"])
    notes["stalls"] = figure_stalls(data, pshape, figdir / FIGURES["stalls"]) if data.profile is not None else \
        "no profile data: warp-stall figure skipped"
    _figure_md(add, figs, notes, "roofline", "Roofline: measured tensor-core and DRAM ceilings; each profiled "
               "kernel at its achieved TFLOP/s and arithmetic intensity", figdir)
    _figure_md(add, figs, notes, "stalls", "Warp-stall breakdown per implementation" +
               (f" at {shape_label(pshape)}" if pshape else ""), figdir)
    for key, name in FIGURES.items():  # a figure from an earlier report that this run cannot draw
        if key not in figs and (figdir / name).exists():
            (figdir / name).unlink()

    # -- missing ---------------------------------------------------------------------------
    if data.missing:
        add("## What is missing from this run")
        add("")
        for m in data.missing:
            add(f"- {m}")
        add("")

    # -- threats ---------------------------------------------------------------------------
    add("## Threats to validity")
    add("")
    for t in _threats(data, abl, xgaps, clk, cap_rows):
        add(f"- {t}")
    add("")

    # -- reproduce -------------------------------------------------------------------------
    add("## How to reproduce")
    add("")
    shapes = [Shape(*s) for s in params.get("shapes", [])]
    modes_p = ",".join(params.get("modes", [])) or "hot,cold"
    var = params.get("variants") or []
    var_arg = "" if var == [v.name for v in _manifest()] else f" VARIANTS={','.join(var)}"
    add("```bash")
    add(f"git checkout {env.get('git_sha', '<sha>')}")
    add(f"make ablation SHAPES='{_shapes_spec(shapes)}' MODES={modes_p} CAP={params.get('cap_s', 3)} "
        f"MIN_SAMPLES={params.get('min_samples', 20)} PROFILE_SHAPES={params.get('profile_shapes', 'distinct')} PROFILE={int(bool(params.get('profile', True)))} CHECK={params.get('check', 'full')}{var_arg}"
        "   # on a GPU machine: a new run")
    add(f"make report RUN={data.run_id}   # this report, from this run's folder (no GPU needed)")
    add(f"python -m lab.report {data.run_id} --reports-dir reports   # the same, directly")
    add("```")
    add("")
    add(f"The stopping rule's relative CI target (rel_ci = {params.get('rel_ci', MISSING)}) is `--rel-ci` of "
        "`python -m lab.pipeline`. Code diffs between neighbouring steps are in `ablation.html`.")
    add("")

    md = "\n".join(L).rstrip() + "\n"
    return Report(markdown=md, figures=figs, diffs=_diffs(data),
                  title=f"FlashAttention ablation · {data.run_id}", label=label)


def _run_path(data: RunData) -> str:
    from lab.variants import REPO

    try:
        return str(data.rec.dir.resolve().relative_to(REPO)) + "/"
    except ValueError:
        return str(data.rec.dir) + "/"


def _step(r) -> str:
    return str(int(r.step)) if _isnum(r.step) else MISSING


def _shape_tuple(key) -> str:
    B, H, S, D, causal = key
    return f"({B}, {H}, {S}, {D}{', causal' if _bool(causal) else ''})"


def _figure_md(add, figs, notes, key, caption, figdir):
    if notes.get(key) is None and (figdir / FIGURES[key]).exists():
        figs[key] = figdir / FIGURES[key]
        add(f"![{caption}](figures/{FIGURES[key]})")
    else:
        add(f"*Figure not drawn: {notes.get(key)}.*")
    add("")


def _shape_notes(data: RunData, shape: Shape) -> str:
    out = []
    for note in data.shape_notes or []:
        if note.get("shape") != shape.id:
            continue
        for impl, why in (note.get("unsupported") or {}).items():
            out.append(f"{impl} unsupported: {_first_line(why)}")
        for impl, why in (note.get("errors") or {}).items():
            out.append(f"{impl} failed: {_first_line(why)}")
    for name in data.variants:
        if name in data.excluded:
            out.append(f"{name} not timed (excluded: {_first_line(data.excluded[name])})")
    return ("Notes: " + "; ".join(out) + ".") if out else ""


def _threats(data: RunData, abl: pd.DataFrame, xgaps, clk, cap_rows) -> list[str]:
    t = []
    env = data.env
    # profiled vs timed shapes
    if data.profile is not None and len(data.profile):
        profiled = {Shape(int(r.B), int(r.H), int(r.S), int(r.D), _bool(r.causal)) for r in data.profile.itertuples()}
        timed = data.measured_shapes
        unprof = [s for s in timed if s not in profiled]
        stand_in = sorted({shape_label(data.profile_shape_for(s)) for s in unprof if data.profile_shape_for(s)})
        if unprof:
            t.append(f"Profiled shapes differ from timed ones: {len(unprof)} of {len(timed)} timed shapes were not "
                     f"profiled themselves (all causal shapes, and other B/H at a profiled S and D); their "
                     f"profile stand-ins are {', '.join(stand_in) if stand_in else 'none'}. The profiler metrics in "
                     "this report describe those launches, not every timed one.")
        head = data.headline()
        ps = data.profile_shape_for(head) if head else None
        if head and ps and ps != head:
            t.append(f"The ablation's profile columns come from {shape_label(ps)}, not the timed "
                     f"{shape_label(head)}.")
        # ncu duration against the timed cold median at the same shape
        devs = []
        for r in data.profile.itertuples():
            s = Shape(int(r.B), int(r.H), int(r.S), int(r.D), _bool(r.causal))
            med = data.median(r.impl, s, "cold")
            if med and _isnum(getattr(r, "duration_us", None)):
                devs.append((abs(r.duration_us / med - 1), r.impl, s, r.duration_us / med))
        passes = pd.to_numeric(data.profile.get("replay_passes"), errors="coerce").dropna() \
            if "replay_passes" in data.profile else pd.Series([], dtype=float)
        txt = ("Nsight Compute replays each profiled kernel"
               + ((f" {passes.min():.0f} times" if passes.min() == passes.max() else
                   f" {passes.min():.0f}–{passes.max():.0f} times") if len(passes) else "")
               + " to collect its counters, flushing caches between passes, and profiles a single launch; its "
               "durations are cold single-launch times under the profiler")
        if devs:
            worst = max(devs, key=lambda d: d[0])
            txt += (f". Against the timed cold medians at the same shapes the ncu durations differ by at most "
                    f"{worst[0] * 100:.1f} % ({worst[1]} at {shape_label(worst[2])}: ratio {worst[3]:.3f})")
        clock_ctl = _ncu_clock_control(data)
        if clock_ctl:
            txt += f"; ncu ran with `--clock-control {clock_ctl}`"
        t.append(txt + ".")
    else:
        t.append("No profiler data: the hypotheses cannot be checked against their mechanism, only their speed.")
    # clocks
    if clk.get("clock_min") is not None:
        t.append(f"Clocks were not locked. NVML's SM clock readings, taken at block boundaries and not per "
                 f"launch, were {_clock_range(clk)}; power-cap slowdowns (limit {env.get('power_limit_w', MISSING)} "
                 "W) are not flagged as throttling, so a power-capped clock dip inside a block would go unnoticed; "
                 "long kernels at the large shapes are the most exposed.")
    else:
        t.append("No SM clock readings were recorded: clock changes during the run are not visible.")
    if clk.get("throttled"):
        t.append(f"{clk['throttled']} samples were taken during a thermal/hardware slowdown and dropped.")
    # cross-validation
    if xgaps:
        t.append(f"Cross-validation gaps above {XVAL_GAP * 100:.0f} % between this harness and triton's "
                 f"do_bench_cudagraph: {'; '.join(xgaps)}. Absolute times at those shapes carry that uncertainty "
                 "(ratios between implementations timed in the same interleave are less affected).")
    elif not data.crossval:
        t.append("The harness was not cross-validated in this run (crossval.json missing or empty).")
    if cap_rows:
        t.append(f"{len(cap_rows)} row(s) hit the time cap before the CI target: " + "; ".join(cap_rows) + ".")
    if data.summary is not None and "n" in data.summary:
        floor = int(data.params.get("min_samples", 20))  # runs before the parameter used 20
        small = int((data.summary["n"] <= floor).sum())
        if small:
            t.append(f"{small} of {len(data.summary)} rows met the CI target at the {floor}-sample minimum, so their "
                     f"medians and CIs rest on {floor} samples (in hot mode each a CUDA-graph replay averaging many "
                     "launches); slow drifts longer than their sampling window would not show in them.")
    t.append(f"One GPU ({env.get('gpu', 'unknown')}), one run, one process: nothing here shows how the results "
             "vary between boards, drivers or runs; comparisons across runs go through `python -m lab compare`.")
    if data.excluded:
        t.append("Excluded variants (not timed): "
                 + "; ".join(f"{k}: {_first_line(v)}" for k, v in data.excluded.items()) + ".")
    if data.env.get("git_dirty"):
        t.append("The working tree was dirty when the run started: the git sha does not fully identify the code.")
    same, differ = _source_check(data)
    if differ:
        t.append(f"The kernel sources in this tree differ from those the run built ({', '.join(differ)}): the "
                 "code diffs in ablation.html may not show what was measured.")
    elif same:
        t.append(f"The code diffs come from the working tree; every variant's source hash matches the run's "
                 f"build.json ({len(same)} of {len(data.variants)} checked).")
    if data.status.get("state") != "complete":
        t.append(f"The run's state is '{data.status.get('state')}', not 'complete'.")
    return t


def _ncu_clock_control(data: RunData) -> str | None:
    d = data.rec.path("ncu")
    if not d.is_dir():
        return None
    found = set()
    for log in sorted(d.glob("*.log")):
        m = re.search(r"--clock-control\s+(\S+)", log.read_text(errors="replace")[:4000])
        if m:
            found.add(m.group(1))
    return ", ".join(sorted(found)) if found else None


# ---------------------------------------------------------------------------------------------
# Code diffs
# ---------------------------------------------------------------------------------------------


def _diffs(data: RunData) -> list[dict]:
    out = []
    for name in data.variants:
        v = _variant(name)
        if v is None or not v.parent:
            continue
        p = _variant(v.parent)
        if p is None or not v.path.is_file() or not p.path.is_file():
            out.append(dict(variant=name, parent=v.parent, title=v.title, lines=[], note="source file missing"))
            continue
        lines = list(difflib.unified_diff(p.path.read_text().splitlines(), v.path.read_text().splitlines(),
                                          fromfile=f"kernels/variants/{p.file}", tofile=f"kernels/variants/{v.file}",
                                          lineterm="", n=3))
        added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
        removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
        out.append(dict(variant=name, parent=v.parent, title=v.title, lines=lines, added=added, removed=removed,
                        index=v.index, note=""))
    return out


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------

CSS = """
body{font-family:'DejaVu Sans',Arial,Helvetica,sans-serif;margin:0;background:#f6f7f9;color:#1d2330;
font-size:14px;line-height:1.45}
header{background:#1d2b44;color:#fff;padding:18px 32px}
header h1{margin:0 0 6px 0;font-size:22px;border:none;color:#fff}
header .label{font-size:14px;opacity:.9}
main{max-width:1500px;margin:0 auto;padding:12px 32px 48px 32px}
h1{font-size:22px} h2{font-size:19px;border-bottom:2px solid #1d2b44;padding-bottom:3px;margin-top:32px}
h3{font-size:16px;margin-top:22px} h4{font-size:14px;margin:16px 0 6px 0}
table{border-collapse:collapse;margin:8px 0 12px 0;background:#fff;font-size:12.5px}
th,td{border:1px solid #cfd5df;padding:3px 7px;vertical-align:top}
th{background:#e8ecf3;text-align:left}
td.r,th.r{text-align:right} td.c,th.c{text-align:center}
.tw{overflow-x:auto;max-width:100%}
tr:nth-child(even) td{background:#fafbfd}
code{background:#eef1f6;padding:0 3px;border-radius:3px;font-family:'DejaVu Sans Mono',monospace;font-size:12px}
pre{background:#fff;border:1px solid #cfd5df;padding:8px 10px;overflow-x:auto;font-size:12px;line-height:1.35}
pre code{background:none;padding:0}
blockquote{border-left:4px solid #d9822b;margin:10px 0;padding:4px 12px;background:#fff6ec}
figure{margin:14px 0;background:#fff;border:1px solid #cfd5df;padding:8px;display:inline-block}
figure img{max-width:100%;height:auto;display:block}
figcaption{font-size:12px;color:#4a5468;margin-top:4px}
pre.diff{font-family:'DejaVu Sans Mono',monospace}
pre.diff .add{background:#e3f6e5;color:#135c1e;display:block}
pre.diff .del{background:#fbe4e4;color:#8a1414;display:block}
pre.diff .hunk{color:#2a53a0;display:block;background:#eef3fc}
pre.diff .hdr{color:#59606e;display:block;font-weight:bold}
pre.diff .ctx{display:block}
.meta{color:#4a5468;font-size:12.5px}
"""


def _inline(text: str) -> str:
    """Escape, then `code` and **bold**; a scheme-like '://' is defused so no URL is referenced."""
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for p in parts:
        if len(p) >= 2 and p.startswith("`") and p.endswith("`"):
            out.append(f"<code>{_esc(p[1:-1])}</code>")
        else:
            e = _esc(p)
            e = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", e)
            e = re.sub(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", r"<em>\1</em>", e)
            out.append(e)
    return "".join(out)


def _esc(text: str) -> str:
    return html.escape(text, quote=True).replace("://", ":&#47;&#47;")


def _split_row(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def markdown_to_html(md: str, images: dict[str, bytes]) -> str:
    """The subset of Markdown this module writes: headings, paragraphs, pipe tables, lists, fenced
    code, block quotes and image paragraphs (embedded from `images`, keyed by their path)."""
    lines = md.splitlines()
    out: list[str] = []
    i = 0
    slug_seen: dict = {}
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append("<pre><code>" + _esc("\n".join(lines[i + 1:j])) + "</code></pre>")
            i = j + 1
            continue
        m = re.match(r"^(#{1,6})\s+(.*)$", line)
        if m:
            level, text = len(m.group(1)), m.group(2)
            slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
            slug_seen[slug] = slug_seen.get(slug, 0) + 1
            if slug_seen[slug] > 1:
                slug = f"{slug}-{slug_seen[slug]}"
            out.append(f'<h{level} id="{slug}">{_inline(text)}</h{level}>')
            i += 1
            continue
        if line.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            header = _split_row(block[0])
            aligns = []
            for c in _split_row(block[1]) if len(block) > 1 else []:
                aligns.append("r" if c.endswith(":") and not c.startswith(":") else "c" if c.startswith(":") and
                              c.endswith(":") else "")
            cls = lambda k: f' class="{aligns[k]}"' if k < len(aligns) and aligns[k] else ""  # noqa: E731
            h = "<table><thead><tr>" + "".join(f"<th{cls(k)}>{_inline(c)}</th>" for k, c in enumerate(header))
            h += "</tr></thead><tbody>"
            for row in block[2:]:
                h += "<tr>" + "".join(f"<td{cls(k)}>{_inline(c)}</td>" for k, c in enumerate(_split_row(row))) + "</tr>"
            out.append('<div class="tw">' + h + "</tbody></table></div>")
            continue
        if re.match(r"^(- |\d+\. )", line):
            ordered = not line.startswith("- ")
            items = []
            while i < len(lines) and re.match(r"^(- |\d+\. )", lines[i]):
                items.append(re.sub(r"^(- |\d+\. )", "", lines[i]))
                i += 1
                while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                    items[-1] += " " + lines[i].strip()
                    i += 1
            tag = "ol" if ordered else "ul"
            out.append(f"<{tag}>" + "".join(f"<li>{_inline(it)}</li>" for it in items) + f"</{tag}>")
            continue
        m = re.match(r"^!\[(.*)\]\((.*)\)\s*$", line)
        if m:
            alt, src = m.group(1), m.group(2)
            data = images.get(src)
            if data is not None:
                b64 = base64.b64encode(data).decode("ascii")
                out.append(f'<figure><img alt="{_esc(alt)}" src="data:image/png;base64,{b64}">'
                           f"<figcaption>{_inline(alt)}</figcaption></figure>")
            else:
                out.append(f"<p><em>figure missing: {_esc(src)}</em></p>")
            i += 1
            continue
        if line.startswith(">"):
            block = []
            while i < len(lines) and lines[i].startswith(">"):
                block.append(lines[i].lstrip(">").strip())
                i += 1
            out.append("<blockquote><p>" + _inline(" ".join(block)) + "</p></blockquote>")
            continue
        block = []
        while i < len(lines) and lines[i].strip() and not re.match(r"^(#{1,6}\s|\||```|- |\d+\. |>|!\[)", lines[i]):
            block.append(lines[i])
            i += 1
        if not block:  # a line no rule took: keep it as a paragraph
            block, i = [line], i + 1
        out.append("<p>" + _inline(" ".join(block)) + "</p>")
    return "\n".join(out)


def _diff_html(diffs: list[dict]) -> str:
    out = ['<h2 id="code-diffs">Code diffs between neighbouring steps</h2>',
           "<p>Each step's variant file against its parent's (<code>difflib.unified_diff</code>, 3 lines of "
           "context). Shared device code lives in <code>kernels/include/fa/</code>; a step that switches to "
           "another header shows it as a changed <code>#include</code>.</p>"]
    for d in diffs:
        out.append(f'<h3 id="diff-{_esc(d["variant"])}">{_esc(str(d.get("index", "")))}. {_esc(d["title"])}: '
                   f"<code>{_esc(d['parent'])}</code> → <code>{_esc(d['variant'])}</code></h3>")
        if d["note"]:
            out.append(f'<p class="meta">{_esc(d["note"])}</p>')
            continue
        out.append(f'<p class="meta">+{d["added"]} / −{d["removed"]} lines</p>')
        spans = []
        for ln in d["lines"]:
            if ln.startswith("+++") or ln.startswith("---"):
                cls = "hdr"
            elif ln.startswith("@@"):
                cls = "hunk"
            elif ln.startswith("+"):
                cls = "add"
            elif ln.startswith("-"):
                cls = "del"
            else:
                cls = "ctx"
            spans.append(f'<span class="{cls}">{_esc(ln) or " "}</span>')
        out.append('<pre class="diff">' + "".join(spans) + "</pre>")
    return "\n".join(out)


def render_html(rep: Report, reports_dir: Path) -> str:
    images = {f"figures/{p.name}": p.read_bytes() for p in rep.figures.values()}
    md = rep.markdown
    # the title and label go in the page header; the body starts after them
    body_md = "\n".join(ln for ln in md.splitlines()[1:] if ln.strip() != f"**{rep.label}**")
    body = markdown_to_html(body_md, images)
    marker = '<h2 id="how-to-reproduce">'
    diffs = _diff_html(rep.diffs)
    body = body.replace(marker, diffs + "\n" + marker, 1) if marker in body else body + "\n" + diffs
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{_esc(rep.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f"<header><h1>{_inline(md.splitlines()[0].lstrip('# '))}</h1>"
            f"<div class=\"label\">{_esc(rep.label)}</div></header>\n<main>\n{body}\n</main>\n</body>\n</html>\n")


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def write(rec, reports_dir) -> Path:
    """Write OPTIMIZATION_REPORT.md, ablation.html and figures/ under reports_dir; returns the .md path."""
    data = _data(rec)
    reports_dir = Path(reports_dir)
    reports_dir.mkdir(parents=True, exist_ok=True)
    rep = _build(data, reports_dir)
    md_path = reports_dir / "OPTIMIZATION_REPORT.md"
    md_path.write_text(rep.markdown, encoding="utf-8")
    (reports_dir / "ablation.html").write_text(render_html(rep, reports_dir), encoding="utf-8")
    return md_path


def default_run(root: Path | None = None) -> str | None:
    """The latest complete run, else the latest run of any state."""
    return records.latest_run(root) or records.latest_run(root, complete_only=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lab.report", description=__doc__.splitlines()[0])
    ap.add_argument("run_id", nargs="?", default="", help="a run under data/runs (default: the latest complete "
                    "run, else the latest run)")
    ap.add_argument("--reports-dir", default="reports")
    ap.add_argument("--runs-root", default=None, help="where the runs are (default: data/runs)")
    args = ap.parse_args(argv)
    root = Path(args.runs_root) if args.runs_root else None
    run_id = args.run_id or default_run(root)
    if not run_id:
        print(f"no run under {root or records.RUNS_DIR} to report on", file=sys.stderr)
        return 1
    try:
        rec = records.RunRecord.open(run_id, root)
    except FileNotFoundError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    state = rec.status.get("state", "unknown")
    if state != "complete":
        print(f"note: run {run_id} is '{state}', not complete; the report says so", file=sys.stderr)
    path = write(rec, args.reports_dir)
    print(f"{path}\n{Path(args.reports_dir) / 'ablation.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
