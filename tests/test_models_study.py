"""CPU tests of the `models` study (issue 22): timing the inputs real models run (K/V heads, bf16),
skipping and recording what an implementation does not take, the models shape set and its scope,
and old run records reading as before. Expected values are written out by hand."""

import pytest
import torch

from lab.kernels.shape import Shape
from lab.measure import peers, records, stats
from lab.studies.measure_shape import input_sets, measure_shape


class _Kernel:
    """A built variant without a GPU: records the tensors each launch gets; takes `dtypes`/`kv_heads`."""

    def __init__(self, name, dtypes=("fp16",), kv_heads="same"):
        self.name, self.dtypes, self.kv_heads, self.launched = name, dtypes, kv_heads, []

    def not_taken(self, shape):
        from lab.kernels.shape import not_taken

        return not_taken(f"variant {self.name!r}", self.dtypes, self.kv_heads, shape.dtype, shape.H, shape.H_kv)

    def launch(self, q, k, v, out, causal, scale=None):
        self.launched.append((tuple(q.shape), tuple(k.shape), tuple(v.shape), tuple(out.shape), q.dtype, k.dtype))


def _cpu_measure(monkeypatch, shape, kernels, peer_list):
    """measure_shape on the CPU: inputs on the CPU, timers that launch each closure once, 5 samples of 10 us."""
    from lab.measure import timing

    real_randn = torch.randn
    monkeypatch.setattr(torch, "randn", lambda *a, device=None, **kw: real_randn(*a, **kw))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda *a: None)
    monkeypatch.setattr(timing, "l2_bytes", lambda: 1 << 30)

    class OnceTimer:
        def __init__(self, launches):
            launches[0]()

    def interleave(timers, rule, clocks=None, seed=0, context_of=None):
        return {n: {"samples": [10.0] * 5, "clock_mhz": [1980.0] * 5, "throttled": [False] * 5, "stopped_by": "ci"}
                for n in timers}

    monkeypatch.setattr(timing, "HotTimer", OnceTimer)
    monkeypatch.setattr(timing, "interleave", interleave)
    return measure_shape(shape, kernels, peer_list, ["hot"], rule=None, clocks=None, run_id="r", aa_impl=None,
                         seed=0, progress=lambda s: None)


def test_a_model_shape_times_what_takes_it_with_k_v_heads_and_bf16_and_records_the_rest(monkeypatch):
    shape = Shape.parse("2,8,64,64,causal,kv2,bf16")
    model, tma = _Kernel("model_inputs", ("fp16", "bf16"), "grouped"), _Kernel("tma")
    samples, summary, notes = _cpu_measure(monkeypatch, shape, {"model_inputs": model, "tma": tma},
                                           [peers.SdpaPeer("math")])
    assert model.launched[0] == ((2, 8, 64, 64), (2, 2, 64, 64), (2, 2, 64, 64), (2, 8, 64, 64), torch.bfloat16,
                                 torch.bfloat16)
    assert tma.launched == []
    assert notes["not_taken"] == {"tma": "variant 'tma' takes float16 only (its manifest dtypes); got bfloat16"}
    assert notes["unsupported"] == {} and notes["shape"] == "B2-H8-S64-D64-causal-kv2-bf16"
    assert sorted({r["impl"] for r in summary}) == ["model_inputs", "sdpa_math"]
    assert {(r["H_kv"], r["dtype"]) for r in samples} == {(2, "bfloat16")}
    row = next(r for r in summary if r["impl"] == "model_inputs")
    assert (row["H"], row["H_kv"], row["dtype"]) == (8, 2, "bfloat16")
    # Q and O: 2*8*64*64 elements each; K and V: 2*2*64*64 each; 2 bytes; 10 us
    assert row["gbps"] == pytest.approx((2 * 2 * 8 * 64 * 64 + 2 * 2 * 2 * 64 * 64) * 2 / 10e-6 / 1e9)
    # the FLOP count does not change with grouping: 4*B*H*S*S*D, halved for causal
    assert row["tflops"] == pytest.approx(4 * 2 * 8 * 64 * 64 * 64 / 2 / 10e-6 / 1e12)


def test_a_plain_shape_is_measured_as_before(monkeypatch):
    tma = _Kernel("tma")
    samples, summary, notes = _cpu_measure(monkeypatch, Shape(1, 2, 32, 64, True), {"tma": tma}, [])
    assert tma.launched[0][:4] == ((1, 2, 32, 64),) * 4 and tma.launched[0][4] == torch.float16
    assert notes["not_taken"] == {} and {(r["H_kv"], r["dtype"]) for r in samples} == {(2, "float16")}


def test_input_sets_count_k_v_heads_and_bytes():
    l2 = 50 * 2**20
    # plain (4, 16, 512, 64): Q, K, V, O of 4 MiB each, 16 MiB a set: ceil(2 x 50 / 16) = 7 (as before issue 22)
    assert input_sets(Shape(4, 16, 512, 64, False), l2) == 7
    # 8 K/V heads of 32: Q, O 2 x 8 MiB, K, V 2 x 2 MiB = 20 MiB a set: ceil(100 / 20) = 5
    assert input_sets(Shape(4, 32, 512, 64, False, 8, "bf16"), l2) == 5


def test_effective_bandwidth_counts_k_v_once():
    assert stats.effective_gbps(1, 8, 1000, 64, 1.0) == pytest.approx(4 * 8 * 1000 * 64 * 2 / 1e-6 / 1e9)
    assert stats.effective_gbps(1, 8, 1000, 64, 1.0, 2, 1) == pytest.approx((2 * 8 + 2 * 1) * 1000 * 64 * 2 / 1e-6 / 1e9)


def test_old_tables_read_with_h_kv_equal_to_h_and_fp16():
    import pandas as pd

    old = pd.DataFrame([dict(impl="tma", B=4, H=16, S=512, D=64, causal=False, dtype="float16", mode="hot",
                             latency_us=1.0, throttled=False)])
    filled = records.with_replicate(old)
    assert filled.loc[0, "H_kv"] == 16 and filled.loc[0, "replicate"] == 0
    assert Shape.from_row(filled.iloc[0]) == Shape(4, 16, 512, 64, False)
    summary = records.with_shape_columns(old.drop(columns=["dtype"]))
    assert (summary.loc[0, "H_kv"], summary.loc[0, "dtype"]) == (16, "float16")
    new = pd.DataFrame([dict(B=2, H=32, S=8, D=128, causal=True, H_kv=8, dtype="bfloat16")])
    assert Shape.from_row(records.with_shape_columns(new).iloc[0]) == Shape.parse("2,32,8,128,causal,kv8,bf16")
