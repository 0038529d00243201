"""The decode set's copy reference (lab.studies.measure_decode.copy_bandwidth) without a GPU: a stand-in timer whose
first samples are slow, as an H100's were for 5-9 ms of copying after a run's decode checks
(data/explorations/2026-12-07-copy-reference, call 3). The bar must come from the samples after the lead-in, and
the lead-in's own samples must be recorded, not lost. Expected values are worked out here from the stand-in's
microseconds, not from the code under test."""

import math

import pytest

from lab.studies.measure_decode import COPY_BYTES, COPY_LEAD_IN_US, copy_bandwidth

SLOW_US, FAST_US = 208.0, 178.0  # a copy of 256 MB each way: about 2,581 and 3,016 GB/s
REPS = 5  # copies in one sample, as the HotTimer takes at this size


class SlowFirst:
    """HotTimer's interface: the first `slow` samples taken read SLOW_US a copy, every later one FAST_US."""

    def __init__(self, slow: int):
        self.slow, self.taken, self.asked = slow, 0, []
        self.turn_sample_us = FAST_US * REPS

    def samples(self, n: int) -> list[float]:
        self.asked.append(n)
        out = [SLOW_US if self.taken + i < self.slow else FAST_US for i in range(n)]
        self.taken += n
        return out


def gbps(us: float) -> float:
    return 2 * (256 << 20) / (us * 1e3)


def test_the_bar_comes_after_the_lead_in():
    timer = SlowFirst(slow=10)
    got = copy_bandwidth(timer=timer)
    lead = math.ceil(COPY_LEAD_IN_US / (FAST_US * REPS))  # 57 samples of 0.89 ms
    assert timer.asked == [lead, 15]
    assert got["gbps"] == pytest.approx(gbps(FAST_US)) and got["median_us"] == FAST_US
    assert got["bytes"] == 2 * COPY_BYTES and got["samples"] == 15


def test_the_lead_in_is_recorded_with_its_slow_samples():
    got = copy_bandwidth(timer=SlowFirst(slow=10))
    assert got["lead_in"]["samples"] == 57
    assert got["lead_in"]["slowest_gbps"] == pytest.approx(gbps(SLOW_US))
    assert got["lead_in"]["fastest_gbps"] == pytest.approx(gbps(FAST_US))
    assert got["lead_in"]["median_gbps"] == pytest.approx(gbps(FAST_US))  # 10 slow of 57


def test_without_a_lead_in_the_slow_start_sets_the_bar():
    """What the runs before the lead-in recorded: 10 slow samples of 15 put the median on a slow one."""
    got = copy_bandwidth(lead_in_us=0, timer=SlowFirst(slow=10))
    assert got["gbps"] == pytest.approx(gbps(SLOW_US)) and "lead_in" not in got


def test_a_lead_in_shorter_than_one_sample_still_takes_one():
    timer = SlowFirst(slow=0)
    copy_bandwidth(lead_in_us=1.0, timer=timer)
    assert timer.asked == [1, 15]


def test_a_sample_time_under_a_microsecond_counts_as_one():
    """The lead-in's count divides by the sample's time, at least 1 us (a stand-in reporting 0 must not divide by
    zero): 10 us of lead-in are then 10 samples."""
    timer = SlowFirst(slow=0)
    timer.turn_sample_us = 0.0
    copy_bandwidth(lead_in_us=10.0, timer=timer)
    assert timer.asked == [10, 15]
