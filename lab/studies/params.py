"""A run's parameters as its record holds them (params.json)."""

from __future__ import annotations

from lab.kernels.shape import Shape


def read(rec) -> dict:
    """params.json with its shapes as Shapes."""
    p = rec.read_json("params.json")
    p["shapes"] = [Shape(*s) for s in p["shapes"]]
    return p
