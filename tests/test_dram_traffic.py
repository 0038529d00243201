"""The report's DRAM traffic against the inputs and output (Shape.io_bytes, lab.report.traffic's dram_traffic and
dram_flags, the profiler section's subsection): expectations worked out by hand from the shapes' sizes."""

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from lab.kernels.shape import Shape
from lab.report.sections import results
from lab.report.traffic import TRAFFIC_FLAG, dram_flags, dram_traffic

MHA = Shape(4, 16, 4096, 64, True)  # Q, K, V, O: 4 * 16 * 4096 * 64 halves each = 32 MiB each
GQA = Shape(1, 32, 8192, 128, True, 8, "bf16")  # Q and O: 64 MiB each; K and V (8 heads): 16 MiB each


def test_io_bytes_is_q_k_v_read_and_o_written_once():
    assert MHA.io_bytes == 4 * (4 * 16 * 4096 * 64 * 2) == 128 * 2**20
    assert GQA.io_bytes == 2 * (32 * 8192 * 128 * 2) + 2 * (8 * 8192 * 128 * 2) == 160 * 2**20
    assert Shape(1, 8, 512, 64, False).io_bytes == 4 * 8 * 512 * 64 * 2


def _row(impl, shape, dram_bytes, ok=True):
    return {"impl": impl, "B": shape.B, "H": shape.H, "S": shape.S, "D": shape.D, "causal": shape.causal,
            "H_kv": shape.H_kv, "dtype": shape.dtype, "ok": ok, "dram_bytes": dram_bytes}


PROFILE = pd.DataFrame([
    _row("end", MHA, 3 * 128 * 2**20),  # three times the inputs and output: K/V read again
    _row("flash_attn3", MHA, 1.25 * 128 * 2**20),
    _row("end", GQA, 0.5 * 160 * 2**20),
    _row("flash_attn3", GQA, float("nan")),  # profiled, no bytes
    _row("parent", MHA, 2 * 128 * 2**20),  # at the flag exactly
    _row("older", MHA, 1.99 * 128 * 2**20),  # just under it
    _row("failed", GQA, 9 * 160 * 2**20, ok=False),  # a failed launch's row is not read
    _row("end", Shape(8, 16, 512, 64, True), 9 * 2**20, ok=False),  # nor the end's: no row for its shape
    _row("zeta", GQA, 2.5 * 160 * 2**20),  # two launches at the same bytes: named in alphabetical order
    _row("alpha", GQA, 2.5 * 160 * 2**20),
])


def test_dram_traffic_gives_each_impl_its_bytes_over_the_shapes_io_bytes():
    t = dram_traffic(PROFILE, "end", ["flash_attn3", "sdpa_cudnn"])
    assert [r for r in t["shape"]] == [MHA, GQA]
    first, second = t.to_dict("records")
    assert first["io_bytes"] == 128 * 2**20 and second["io_bytes"] == 160 * 2**20
    assert first["end_x"] == pytest.approx(3.0) and first["flash_attn3_x"] == pytest.approx(1.25)
    assert second["end_x"] == pytest.approx(0.5) and math.isnan(second["flash_attn3_x"])
    assert math.isnan(first["sdpa_cudnn_bytes"])  # a peer not profiled at all
    columns = ["shape", "io_bytes", "end_bytes", "end_x", "flash_attn3_bytes", "flash_attn3_x", "sdpa_cudnn_bytes",
               "sdpa_cudnn_x"]
    assert list(t.columns) == columns
    none = dram_traffic(None, "end", ["flash_attn3", "sdpa_cudnn"])
    assert none.empty and list(none.columns) == columns  # no profile: the table's columns, no rows
    absent = dram_traffic(PROFILE, "absent", ["p"])  # an end never profiled: the same
    assert absent.empty and list(absent.columns) == ["shape", "io_bytes", "absent_bytes", "absent_x", "p_bytes", "p_x"]
    older = PROFILE.drop(columns="ok")  # a table from before the column: every row is read, the failed ones too
    assert len(dram_traffic(older, "end", [])) == 3


def test_dram_flags_names_every_launch_at_the_flag_or_above_largest_first():
    assert TRAFFIC_FLAG == 2.0
    flags = dram_flags(PROFILE)
    # by shape in the profile's order, the largest first, ties by name; 1.99x and the failed rows are not named
    assert [(s, i) for s, i, _, _ in flags] == [(MHA, "end"), (MHA, "parent"), (GQA, "alpha"), (GQA, "zeta")]
    assert flags[0][2] == pytest.approx(3.0) and flags[0][3] == 3 * 128 * 2**20
    assert [i for _, i, _, _ in dram_flags(PROFILE, flag=1.2)] == ["end", "parent", "older", "flash_attn3", "alpha",
                                                                    "zeta"]
    assert dram_flags(None) == []
    assert ("failed", 9.0) in [(i, round(x, 6)) for _, i, x, _ in dram_flags(PROFILE.drop(columns="ok"))]


def test_the_profiler_section_shows_the_table_and_the_flagged_launches(monkeypatch):
    monkeypatch.setattr(results.branches, "best_step", lambda data: "end")
    text = "\n".join(results._dram_traffic(SimpleNamespace(profile=PROFILE)))
    assert "### DRAM traffic against the inputs and output" in text
    assert "| (4, 16, 4096, 64) causal | 134 | 403 (3.00×) | 168 (1.25×) |" in text
    assert "moved 2× their inputs and output or more: at (4, 16, 4096, 64) causal: `end` 3.00× (403 MB), " \
           "`parent` 2.00× (268 MB); at (1, 32, 8192, 128) causal, 8 K/V heads, bf16: `alpha` 2.50× (419 MB), " \
           "`zeta` 2.50× (419 MB)." in text
    calm = PROFILE[PROFILE["impl"].isin(["end", "flash_attn3"])].assign(dram_bytes=lambda p: p["dram_bytes"] / 4)
    text = "\n".join(results._dram_traffic(SimpleNamespace(profile=calm)))
    assert "No profiled launch moved 2× its inputs and output or more." in text
