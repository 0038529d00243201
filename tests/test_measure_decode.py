"""CPU tests of the decode measurement (lab.studies.measure_decode) and of the timing loop it shares with
the prefill shapes (lab.studies.measure_shape.time_modes), with lab.measure.timing's timers and interleave
replaced by stand-ins that run each launch once and return set latencies: the bookkeeping around the
GPU timing, not the timing. Expectations are worked out by hand from the layouts."""

import pytest
import torch

from lab.kernels.decode import DecodeShape
from lab.measure import timing
from lab.measure.decode_peers import DecodeSdpaPeer
from lab.studies import measure_decode, measure_shape

LATENCY_US = {"step": 10.0, "sdpa_math": 40.0, "broken": 5.0, "ref": 8.0}


class FakeTimer:
    """Runs every launch once when made (what a real timer's warm-up does), then gives set latencies."""

    def __init__(self, launches):
        self.launches = launches if isinstance(launches, list) else [launches]
        for launch in self.launches:
            launch()


def fake_interleave(timers, rule, clocks=None, seed=0, context_of=None):
    out = {}
    for name in timers:
        base = name.split("__")[0]
        if base == "broken":
            out[name] = {"error": "RuntimeError: launch failed"}
            continue
        lat = LATENCY_US[base]
        out[name] = {"samples": [lat, lat * 1.1, lat * 0.9], "clock_mhz": [1980] * 3, "throttled": [False] * 3,
                     "stopped_by": "fake"}
    return out


@pytest.fixture
def fake_timing(monkeypatch):
    for name in ("HotTimer", "ColdTimer", "SustainedTimer"):
        monkeypatch.setattr(timing, name, FakeTimer)
    monkeypatch.setattr(timing, "interleave", fake_interleave)
    monkeypatch.setattr(timing, "l2_bytes", lambda: 50 << 20)


class FakeStep:
    """A decode step's stand-in: records the workspace each launch gets."""

    def __init__(self, workspace_bytes):
        self.need, self.calls = workspace_bytes, []

    def workspace_bytes(self, q, k_cache, block_table=None):
        return self.need

    def launch(self, q, k_cache, v_cache, cache_lens, block_table, out, scale=None, workspace=None):
        self.calls.append(None if workspace is None else workspace.numel())


def test_a_decode_shape_is_measured_with_its_bandwidth_and_the_peers_that_cannot_take_it_named(fake_timing):
    shape = DecodeShape.parse("2,8,2,64,100,page16")
    step = FakeStep(workspace_bytes=64)
    samples, summary, notes = measure_decode.measure_decode_shape(
        shape, {"step": step}, [DecodeSdpaPeer("math")], ["hot", "cold"], rule=None, clocks=None, run_id="r1",
        seed=0, progress=lambda *_: None, device="cpu")
    # SDPA reads no block table: recorded with its reason, never measured
    assert "block table" in notes["unsupported"]["sdpa_math"] and {r["impl"] for r in samples} == {"step"}
    assert step.calls and set(step.calls) == {64}  # every launch got its own workspace of the asked size
    # 2 sequences x 100 tokens x 2 K/V heads x 64 x (K, V) + (Q, O) 2 x 1 query x 8 heads x 64, 2 bytes each
    bytes_moved = (2 * 100 * 2 * 64 * 2 + 2 * 2 * 1 * 8 * 64) * 2
    hot = next(r for r in summary if r["mode"] == "hot")
    assert hot["bytes_moved"] == bytes_moved == 106_496
    assert hot["median_us"] == pytest.approx(10.0) and hot["gbps"] == pytest.approx(bytes_moved / 10.0 / 1e3)
    assert {r["mode"] for r in summary} == {"hot", "cold"} and len(samples) == 6
    row = samples[0]
    assert (row["run_id"], row["B"], row["H"], row["H_kv"], row["D"], row["cache_len"], row["q_len"],
            row["mixed"], row["page_size"], row["dtype"]) == ("r1", 2, 8, 2, 64, 100, 1, False, 16, "bf16")


def test_an_unpaged_decode_shape_times_the_sdpa_peer_and_a_failing_step_is_a_note(fake_timing):
    shape = DecodeShape.parse("2,8,2,64,100,q2,fp16")
    step, broken = FakeStep(workspace_bytes=0), FakeStep(workspace_bytes=0)
    samples, summary, notes = measure_decode.measure_decode_shape(
        shape, {"step": step, "broken": broken}, [DecodeSdpaPeer("math")], ["hot"], None, None, "r2", 0,
        progress=lambda *_: None, device="cpu")
    assert set(step.calls) == {None}  # no workspace asked, none given
    assert {r["impl"] for r in summary} == {"step", "sdpa_math"} and notes["unsupported"] == {}
    assert notes["errors"] == {"broken/hot": "RuntimeError: launch failed"}  # its samples dropped with it
    assert {r["page_size"] for r in samples} == {0} and {r["q_len"] for r in samples} == {2}


def test_a_decode_cache_that_fits_l2_rotates_several_input_sets():
    l2 = 50 << 20
    # Falcon-7B, batch 8: K and V 2 x 8 x 8192 x 1 x 64 x 2 bytes = 16.8 MB, Q and O 2 x 8 x 71 x 64 x 2 = 145 KB:
    # two L2s of sets need ceil(104,857,600 / 16,922,624) = 7 of them
    assert measure_decode.decode_input_sets(DecodeShape.parse("8,71,1,64,8192"), l2) == 7
    # Llama-3-8B, batch 8 of 8,192 tokens: 268 MB, far past the L2: one set
    assert measure_decode.decode_input_sets(DecodeShape.parse("8,32,8,128,8192"), l2) == 1


def test_the_prefill_shapes_go_through_the_same_timing_loop(fake_timing, monkeypatch):
    from lab.kernels.shape import Shape

    monkeypatch.setattr(Shape, "random_inputs",
                        lambda self, device="cuda", outputs=False: tuple(
                            torch.zeros(s) for s in (self.q_shape, self.kv_shape, self.kv_shape, self.q_shape)))

    class Kernel:
        calls = 0

        def launch(self, q, k, v, o, causal):
            Kernel.calls += 1

    shape = Shape.parse("1,2,64,64,causal")
    samples, summary, notes = measure_shape.measure_shape(shape, {"ref": Kernel()}, [], ["hot"], None, None, "r3",
                                                          "ref", 0, progress=lambda *_: None)
    assert {r["impl"] for r in summary} == {"ref", "ref" + measure_shape.AA_SUFFIX}  # the A/A twin beside it
    assert Kernel.calls >= 2 and notes["errors"] == {}
    row = samples[0]
    assert (row["run_id"], row["B"], row["H"], row["S"], row["D"], row["causal"]) == ("r3", 1, 2, 64, 64, True)
    assert summary[0]["median_us"] == pytest.approx(8.0) and summary[0]["stopped_by"] == "fake"


def test_the_sustained_mode_takes_the_rules_sustained_turns_and_records_them(monkeypatch):
    """SUSTAINED_TURNS reaches the sustained rows' rule (min_turns) and the notes the report reads; the hot
    rows keep the run's rule (one turn may be enough)."""
    seen = {}

    def recording_interleave(timers, rule, clocks=None, seed=0, context_of=None):
        mode = next(iter(timers.values())).mode
        seen[mode] = rule.min_turns
        return {name: {"samples": [1.0] * 3, "clock_mhz": [1980] * 3, "throttled": [False] * 3, "stopped_by": "ci"}
                for name in timers}

    for mode, cls in (("hot", "HotTimer"), ("sustained", "SustainedTimer")):
        monkeypatch.setattr(timing, cls, type(cls, (FakeTimer,), {"mode": mode}))
    monkeypatch.setattr(timing, "interleave", recording_interleave)
    monkeypatch.setattr(timing, "sustained_lead_in", lambda timers: None)
    rule = timing.StopRule(rel_ci=0.005, cap_s=1.0, min_samples=10, sustained_turns=7)
    notes = {"errors": {}}
    samples, summary = measure_shape.time_modes({"step": [lambda: None]}, {}, ["hot", "sustained"], rule, None, 0,
                                                notes, {}, lambda name, mode, kept, stopped, dropped: {"mode": mode},
                                                progress=lambda *_: None)
    assert seen == {"hot": 1, "sustained": 7} and notes["sustained"]["min_turns"] == 7
    assert [r["mode"] for r in summary] == ["hot", "sustained"] and not notes["errors"]
