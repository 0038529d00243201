"""DRAM traffic against the inputs and output: Nsight Compute's DRAM bytes of a profiled launch over the bytes its
call moves at the least (Shape.io_bytes), for the report's profiler section."""

from __future__ import annotations

import math

import pandas as pd

from lab.kernels.shape import Shape
from lab.report.formats import isnum


TRAFFIC_FLAG = 2.0  # DRAM bytes over io_bytes from which the report names a row: K/V read from DRAM again, not the L2


def _bytes_at(profile: pd.DataFrame | None) -> dict[tuple[str, Shape], float]:
    """{(impl, shape): DRAM bytes} of profile.csv's launches that ran (its `ok`; a table without the column: every
    row) and have DRAM bytes, the first row of each pair, in the profile's order."""
    if profile is None:
        return {}
    out = {}
    for r in (profile[profile["ok"].astype(bool)] if "ok" in profile else profile).to_dict("records"):
        if isnum(r.get("dram_bytes")):
            out.setdefault((r["impl"], Shape.from_row(r)), float(r["dram_bytes"]))
    return out


def dram_traffic(profile: pd.DataFrame | None, end: str, peers: list[str]) -> pd.DataFrame:
    """At every shape where `end` was profiled with DRAM bytes: those bytes (Nsight Compute's dram__bytes, one launch)
    and each peer's at that shape, over the shape's io_bytes (Q, K and V read once, O written once). Columns: shape,
    io_bytes, then <impl>_bytes and <impl>_x for `end` and each peer (NaN where it was not profiled there); one row a
    shape, in the profile's order."""
    cols = ["shape", "io_bytes"] + [f"{i}_{c}" for i in [end, *peers] for c in ("bytes", "x")]
    bytes_at = _bytes_at(profile)
    rows = []
    for shape in dict.fromkeys(s for i, s in bytes_at if i == end):
        row = {"shape": shape, "io_bytes": shape.io_bytes}
        for impl in [end, *peers]:
            b = bytes_at.get((impl, shape), math.nan)
            row[f"{impl}_bytes"], row[f"{impl}_x"] = b, b / shape.io_bytes
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)


def dram_flags(profile: pd.DataFrame | None, flag: float = TRAFFIC_FLAG) -> list[tuple[Shape, str, float, float]]:
    """Every profiled launch (any purpose, steps and peers) whose DRAM bytes are at least `flag` times its shape's
    io_bytes: (shape, impl, bytes over io_bytes, bytes), by shape in the profile's order, the largest first within one."""
    hits = [(s, i, b / s.io_bytes, b) for (i, s), b in _bytes_at(profile).items() if b / s.io_bytes >= flag]
    order = list(dict.fromkeys(s for s, *_ in hits))
    return sorted(hits, key=lambda t: (order.index(t[0]), -t[2], t[1]))
