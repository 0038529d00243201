"""The report's formats, in one home: its constants, the figures' file names, and how numbers and tables are
written."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from lab.kernels.shape import Shape
from lab.measure.records import SHAPE_COLUMNS

PEER = "sdpa_flash"
DPI = 110
METRIC_MOVE = 0.05  # relative move of a hypothesis metric that counts as "moved"
XVAL_GAP = 0.03  # cross-validation ratio further than this from 1 is listed as a threat
KEYS = SHAPE_COLUMNS  # a shape's columns in samples and summary (read through records.with_shape_columns)
FIGURES = {
    "hero": "hero_tflops.png",
    "latency": "latency_ecdf.png",
    "speedup": "speedup.png",
    "roofline": "roofline.png",
    "sweep": "tflops_vs_S.png",
    "stalls": "warp_stalls.png",
    "knockouts": "knockouts.png",
    "tuning": "tuning_trials.png",
    "models": "models.png",
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
    ("sm_active_balance", "SM balance (the mean SM's active cycles over the busiest's)", "", 0.01),
)


# --- how numbers and tables are written: the one home for the report's formats -------------


def save_figure(fig, path, dpi: int = DPI):
    """A figure as a PNG with no software or date metadata (a second write is byte-identical),
    quantized to 256 colours (median cut): a plot's flat colours and their anti-aliasing survive,
    and the file is about a third of matplotlib's RGBA PNG, which every recorded run adds to the
    repository's history. bbox "tight" keeps legends placed outside the axes inside the image."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None}, bbox_inches="tight", pad_inches=0.15)
    with Image.open(io.BytesIO(buf.getvalue())) as im:
        im.convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT).save(path, format="PNG", optimize=True)
    return path


def new_lines() -> tuple[list[str], Callable[[str], None]]:
    """A section's lines, and the append that adds one: `L, add = new_lines()`."""
    lines: list[str] = []
    return lines, lines.append


def isnum(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and math.isfinite(x)


def fmt(x, nd: int = 2, suffix: str = "") -> str:
    return f"{x:.{nd}f}{suffix}" if isnum(x) else MISSING


def fmt_us(x) -> str:
    """Median latencies: two decimals of a microsecond, no thousands separator."""
    return fmt(x, 2)


def fmt_ratio(x) -> str:
    if not isnum(x):
        return MISSING
    return f"{x:.4f}" if abs(x) < 0.1 else f"{x:.3f}"


def fmt_ci(ratio, lo, hi, mark: str = "×", missing: str = MISSING) -> str:
    """A ratio with its interval, '1.234× [1.200, 1.270]' (`mark` after the ratio: '×', 'x' or ''),
    or `missing` where there is no ratio."""
    if not isnum(ratio):
        return missing
    return f"{fmt_ratio(ratio)}{mark} [{fmt_ratio(lo)}, {fmt_ratio(hi)}]"


def fmt_p(p) -> str:
    if not isnum(p):
        return MISSING
    return f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}"


def fmt_g(x, nd: int = 3) -> str:
    """A profiler value: a few significant digits."""
    if not isnum(x):
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


def index_runs(indices) -> str:
    """Step numbers with runs collapsed, in order: [1, 2, 3, 5, 19, 20] -> '1–3, 5, 19–20'."""
    runs: list[list[int]] = []
    for i in sorted(indices):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


def md_table(headers: list[str], rows: list[list], align: str | None = None, compact: bool = False) -> str:
    """A Markdown table; `align` one letter a column (l, r, c); `compact`: the rule under the
    header written `|---|---|` (the studies' sections) rather than `| --- | --- |`."""
    align = align or "l" * len(headers)
    sep = ["---:" if a == "r" else ":---:" if a == "c" else "---" for a in align]
    rule = "|" + "|".join(sep) + "|" if compact else "| " + " | ".join(sep) + " |"
    lines = ["| " + " | ".join(_md_cell(h) for h in headers) + " |", rule]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
