"""Which samples the statistics drop (lab.measure.records.dropped, lab.measure.timing.interleave): a burst (hot or
cold) sample for any thermal or hardware slowdown around its block; a sustained one for a hardware slowdown at the
end of its turn alone, the driver's thermal slowdown being, like the power cap, part of the sustained load
(lab.measure.clocks.SUSTAINED_SLOWDOWN_NAMES)."""

import pandas as pd
import pytest

from lab.measure import clocks, records, timing
from tests.test_clock_trace import Turn
from tests.test_stopping_rule import FakeTime

# nvml.h's nvmlClocksEventReason* values, written out from NVML's documentation
SW_POWER_CAP, HW_SLOWDOWN, SW_THERMAL, HW_THERMAL, HW_POWER_BRAKE = 0x4, 0x8, 0x20, 0x40, 0x80


def test_the_reason_bits_are_nvmls():
    pynvml = pytest.importorskip("pynvml")
    for name, bit in clocks.REASON_BITS.items():
        camel = "".join(p.capitalize() for p in name.lower().split("_"))
        value = getattr(pynvml, f"nvmlClocksEventReason{camel}", None) or getattr(pynvml, f"nvmlClocksThrottleReason{camel}")
        assert bit == value, name
    assert clocks.SUSTAINED_SLOWDOWN_MASK == HW_SLOWDOWN | HW_THERMAL | HW_POWER_BRAKE


# (mode, throttled as recorded, clock_reasons at the end of the turn, dropped?), each decided by hand from the rule
CASES = [
    ("hot", True, SW_THERMAL, True),  # a burst sample: its flag decides
    ("hot", False, HW_THERMAL, False),  # the end-of-turn reasons are not a burst sample's rule
    ("cold", True, None, True),
    ("cold", False, SW_POWER_CAP, False),
    ("sustained", True, SW_THERMAL, False),  # flagged by the old rule, kept by this one
    ("sustained", True, SW_THERMAL | SW_POWER_CAP, False),
    ("sustained", False, SW_POWER_CAP, False),
    ("sustained", False, 0, False),
    ("sustained", False, HW_SLOWDOWN, True),  # a hardware slowdown drops it whatever the flag says
    ("sustained", True, HW_THERMAL | SW_THERMAL, True),
    ("sustained", False, HW_POWER_BRAKE | SW_POWER_CAP, True),
    ("sustained", True, None, True),  # no reasons recorded: the flag decides
    ("sustained", False, None, False),
]


def test_dropped_follows_the_rule_of_each_mode():
    samples = pd.DataFrame([{"mode": m, "throttled": t, "clock_reasons": r, "latency_us": 1.0} for m, t, r, _ in CASES])
    assert records.dropped(samples).tolist() == [d for *_, d in CASES]


def test_dropped_without_reasons_or_modes_is_the_flag():
    flags = [True, False, None]
    old = pd.DataFrame({"throttled": flags, "latency_us": [1.0] * 3})  # runs before issue 45: no clock_reasons
    assert records.dropped(old).tolist() == [True, False, False]
    assert records.dropped(old.assign(mode="sustained")).tolist() == [True, False, False]


class ReasonClocks:
    """Clocks.read gives a thermal slowdown before and after every block; Clocks.load the end-of-turn reasons."""

    def __init__(self, reasons):
        self.reasons = reasons

    def read(self):
        return 1500.0, True

    def load(self):
        return {} if self.reasons is None else {"power_w": 690.0, "temp_c": 78.0, "clock_reasons": self.reasons}


@pytest.mark.parametrize("reasons, sustained_dropped", [
    (SW_THERMAL, False), (SW_THERMAL | SW_POWER_CAP, False), (HW_THERMAL, True), (HW_SLOWDOWN | SW_THERMAL, True),
    (None, True),  # no load reading: the readings around the block decide, as for a burst
])
def test_interleave_flags_a_sustained_turn_by_its_hardware_slowdowns_and_a_burst_by_any(monkeypatch, reasons,
                                                                                       sustained_dropped):
    monkeypatch.setattr(timing, "time", FakeTime())
    rule = timing.StopRule(rel_ci=0.5, cap_s=0.015, min_samples=10, block=10, min_turns=2)  # by the cap: 2 turns a row
    state = timing.interleave({"turn": Turn(timing.time, settle_ms=150.0), "burst": Turn(timing.time)}, rule,
                              clocks=ReasonClocks(reasons))
    assert state["turn"]["throttled"] == [sustained_dropped] * 20
    assert state["burst"]["throttled"] == [True] * 20


def test_a_row_todays_rule_keeps_loses_its_all_throttled_note():
    import numpy as np

    from lab.kernels.shape import Shape
    from lab.report.sections.results import shape_note_text
    from lab.studies.measure_shape import ALL_THROTTLED

    shape = Shape(1, 2, 128, 64, False)

    class Data:  # RunData's part that shape_note_text reads: row a kept samples under today's rule, row b none
        shape_notes = [{"shape": shape.id, "errors": {"a/sustained": ALL_THROTTLED, "b/sustained": ALL_THROTTLED,
                                                     "c/hot": "RuntimeError: boom"}},
                       {"shape": shape.id, "errors": {"a/sustained": f"replicate 1: {ALL_THROTTLED}"}}]  # merged
        variants, excluded = [], {}

        def lat(self, impl, sh, mode):
            return np.ones(3) if (impl, sh, mode) == ("a", shape, "sustained") else None

    assert shape_note_text(Data(), shape) == ("Notes: b/sustained failed: every sample was taken while throttled; "
                                              "c/hot failed: RuntimeError: boom.")


def test_the_clock_summary_counts_the_sustained_samples_kept_under_the_thermal_slowdown():
    from types import SimpleNamespace

    from lab.report.tables import clock_summary

    raw = pd.DataFrame([{"mode": m, "throttled": t, "clock_reasons": r, "sm_clock_mhz": 1500.0, "latency_us": 1.0}
                        for m, t, r, _ in CASES])
    out = clock_summary(SimpleNamespace(raw_samples=raw))
    # dropped: the True rows of CASES (6); sustained rows: 9; kept with SW_THERMAL set: the two flagged-but-kept
    # rows (SW_THERMAL, SW_THERMAL | SW_POWER_CAP); HW_THERMAL | SW_THERMAL is dropped, so not counted
    assert (out["throttled"], out["sustained"], out["sustained_thermal"]) == (6, 9, 2)
