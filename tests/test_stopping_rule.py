"""The timing's stopping rule and its interleaving (lab.measure.timing), with fake timers, a fake NVML
clock that marks blocks throttled and a fake wall clock (issue 20). CPU only, no sleeping.

Expected values are derived by hand from the rule as lab.measure.timing states it: sample in randomized
round-robin blocks until the 95 % CI of the median of the samples NOT taken while throttled is
within +-rel_ci of it (and the 99 % one within +-2 rel_ci), with at least min_samples of them, or
until the time spent in the row's blocks reaches cap_s; a block is throttled when the clock says
so before it or after it.
"""

import contextlib

import numpy as np
import pytest
import torch

from lab.kernels.shape import Shape
from lab.measure import timing
from lab.measure.timing import StopRule, interleave
from lab.studies.measure_shape import measure_shape

TIGHT = StopRule(rel_ci=0.005, cap_s=1e9, min_samples=50, block=10)


class FakeTime:
    """time.perf_counter for lab.measure.timing: advances only when a fake timer takes samples."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


class FakeTimer:
    """A block of samples: `draw(i)` for the i-th sample of this timer, `block_s` fake seconds."""

    def __init__(self, clock: FakeTime, draw=lambda i: 100.0 + 1e-6 * (i % 7), block_s=0.01, log=None, name=""):
        self.clock, self.draw, self.block_s, self.log, self.name = clock, draw, block_s, log, name
        self.taken = 0

    def samples(self, n):
        if self.log is not None:
            self.log.append(self.name)
        out = [self.draw(self.taken + i) for i in range(n)]
        self.taken += n
        self.clock.now += self.block_s
        return out


class FakeClocks:
    """lab.measure.clocks.Clocks.read: (SM clock MHz or None, throttled), two readings per block (before, after)."""

    def __init__(self, readings):
        self.readings = list(readings)
        self.calls = 0

    def read(self):
        self.calls += 1
        return self.readings.pop(0) if self.readings else (1980.0, False)


@pytest.fixture
def fake_time(monkeypatch):
    t = FakeTime()
    monkeypatch.setattr(timing, "time", t)
    return t


def _blocks(state):
    return len(state["samples"]) // 10


def test_throttled_blocks_do_not_count_towards_the_rule(fake_time):
    # every even block is throttled (the reading before it says so): the 50 unthrottled samples the
    # rule needs take blocks 1, 3, 5, 7, 9, so the row stops after 9 blocks, not 5
    readings = []
    for b in range(1, 20):
        readings += [(1980.0, b % 2 == 0), (1980.0, False)]
    clocks = FakeClocks(readings)
    state = interleave({"k": FakeTimer(fake_time)}, TIGHT, clocks=clocks)["k"]
    assert state["stopped_by"] == "ci"
    assert _blocks(state) == 9 and clocks.calls == 18
    assert state["throttled"] == [b % 2 == 0 for b in range(1, 10) for _ in range(10)]


def test_a_block_is_throttled_when_the_reading_after_it_says_so(fake_time):
    readings = []
    for b in range(1, 20):
        readings += [(1980.0, False), (1755.0, b % 2 == 0)]
    state = interleave({"k": FakeTimer(fake_time)}, TIGHT, clocks=FakeClocks(readings))["k"]
    assert _blocks(state) == 9 and sum(state["throttled"]) == 40


def test_the_clock_recorded_is_the_lower_reading_of_the_two(fake_time):
    readings = [(1980.0, False), (1755.0, False), (None, False), (1800.0, False), (1600.0, False), (None, False),
                (None, False), (None, False), (1700.0, False), (1900.0, False)]
    state = interleave({"k": FakeTimer(fake_time)}, TIGHT, clocks=FakeClocks(readings))["k"]
    assert _blocks(state) == 5
    assert state["clock_mhz"] == [c for c in (1755.0, 1800.0, 1600.0, None, 1700.0) for _ in range(10)]
    assert state["throttled"] == [False] * 50


def test_without_clocks_nothing_is_throttled(fake_time):
    state = interleave({"k": FakeTimer(fake_time)}, TIGHT)["k"]
    assert _blocks(state) == 5 and state["stopped_by"] == "ci"
    assert state["clock_mhz"] == [None] * 50 and state["throttled"] == [False] * 50


class FailingTimer(FakeTimer):
    """Raises on its `fail_at`-th block, as timed_blocks does when a hold keeps timing out."""

    def __init__(self, clock, fail_at=2, **kw):
        super().__init__(clock, **kw)
        self.fail_at, self.blocks = fail_at, 0

    def samples(self, n):
        self.blocks += 1
        if self.blocks == self.fail_at:
            if self.log is not None:
                self.log.append(self.name)
            raise RuntimeError("a block of 10 samples was retaken 3 times")
        return super().samples(n)


def test_a_timer_that_raises_stops_alone_and_says_why(fake_time):
    state = interleave({"bad": FailingTimer(fake_time), "good": FakeTimer(fake_time)}, TIGHT)
    assert state["bad"]["error"] == "RuntimeError: a block of 10 samples was retaken 3 times"
    assert state["bad"]["stopped_by"] is None and len(state["bad"]["samples"]) == 10
    assert state["good"]["stopped_by"] == "ci" and _blocks(state["good"]) == 5 and "error" not in state["good"]


def test_in_the_round_a_timer_fails_the_others_still_take_their_turn(fake_time):
    import random

    names = ["bad", "g1", "g2", "g3"]

    def rounds(seed):  # the round robin: each round a fresh shuffle (one rng) of the timers still active
        rng = random.Random(seed)
        first = list(names)
        rng.shuffle(first)
        second = [n for n in first if n != "bad"]
        rng.shuffle(second)
        return first, second

    # a seed whose first round starts with the failing timer, and whose second round's order differs
    seed = next(s for s in range(100) if rounds(s)[0][0] == "bad" and rounds(s)[1] != rounds(s)[0][1:])
    log = []
    timers = {n: (FailingTimer(fake_time, fail_at=1, log=log, name=n) if n == "bad"
                  else FakeTimer(fake_time, log=log, name=n)) for n in names}
    interleave(timers, TIGHT, seed=seed)
    assert log[:len(names)] == rounds(seed)[0]  # the first round whole, in its order, after the failure too


def test_a_row_takes_small_blocks_up_to_its_minimum_and_larger_ones_after(fake_time):
    # 20 samples in blocks of 4, then blocks of 10; a spread that meets the CI only after 60 samples
    log, sizes = [], []
    timer = FakeTimer(fake_time, draw=lambda i: 100.0 + (i % 2) * (5.0 if i < 40 else 1e-6), log=log, name="k")
    real = timer.samples
    timer.samples = lambda n: (sizes.append(n), real(n))[1]
    rule = StopRule(rel_ci=0.005, cap_s=1e9, min_samples=20, block=4, block_after_minimum=10)
    state = interleave({"k": timer}, rule)["k"]
    assert sizes[:5] == [4] * 5 and set(sizes[5:]) == {10}
    assert state["stopped_by"] == "ci" and len(state["samples"]) == sum(sizes)


@pytest.mark.parametrize("sample_us, expected", [
    (2500.0, (1, 1)),  # a turn holds one sample however long it is
    (400.0, (2, 2)),   # floor(1000 / 400) = 2 < the blocks of 4 and 10
    (120.0, (4, 8)),   # floor(1000 / 120) = 8: the minimum's blocks of 4 stay, the later 10 shrink to 8
    (50.0, (4, 10)),   # 20 samples fit: the rule's blocks as they are
    (None, (4, 10)),   # a timer that states no sample time (HotTimer): the rule's blocks
])
def test_a_cold_turn_takes_at_most_turn_us_of_gpu_time_and_at_least_one_sample(fake_time, sample_us, expected):
    sizes = []
    timer = FakeTimer(fake_time, draw=lambda i: 100.0 + (i % 2) * (5.0 if i < 40 else 1e-6))
    if sample_us is not None:
        timer.turn_sample_us = sample_us
    real = timer.samples
    timer.samples = lambda n: (sizes.append(n), real(n))[1]
    rule = StopRule(rel_ci=0.005, cap_s=1e9, min_samples=20, block=4, block_after_minimum=10, turn_us=1000.0)
    state = interleave({"k": timer}, rule)["k"]
    # a turn that starts before the minimum (20 samples) takes the first size, one that starts past it the later
    starts = np.cumsum(sizes) - sizes
    after = [n for n, t in zip(sizes, starts) if t >= 20]
    before = [n for n, t in zip(sizes, starts) if t < 20]
    assert set(before) == {expected[0]} and set(after) == {expected[1]}
    assert state["stopped_by"] == "ci" and len(state["samples"]) == sum(sizes)


def test_block_size_under_turn_us_by_hand():
    rule = StopRule(rel_ci=0.005, cap_s=1.0, min_samples=20, block=4, block_after_minimum=10, turn_us=1000.0)
    assert [rule.block_size(0, us) for us in (5000.0, 999.0, 500.0, 333.0, 250.0, 1.0)] == [1, 1, 2, 3, 4, 4]
    assert [rule.block_size(20, us) for us in (5000.0, 500.0, 111.0, 100.0, 99.0)] == [1, 2, 9, 10, 10]


def test_without_turn_us_a_long_sample_keeps_the_rules_blocks(fake_time):
    sizes = []
    timer = FakeTimer(fake_time)
    timer.turn_sample_us = 5000.0
    real = timer.samples
    timer.samples = lambda n: (sizes.append(n), real(n))[1]
    interleave({"k": timer}, StopRule(rel_ci=0.005, cap_s=1e9, min_samples=20, block=4))
    assert set(sizes) == {4}


class FakeHotTimer(timing.HotTimer, FakeTimer):
    """A HotTimer to interleave (a hot turn's budget is the rule's hot_turn_us), sampling as FakeTimer."""

    def __init__(self, clock, sample_us):
        FakeTimer.__init__(self, clock)
        self.turn_sample_us = sample_us

    samples = FakeTimer.samples


def test_a_hot_timers_turns_keep_to_hot_turn_us_and_a_cold_ones_to_turn_us(fake_time):
    # samples of 3 ms each: hot turns of floor(10000 / 3000) = 3, cold turns of one (turn_us 1000)
    rule = StopRule(rel_ci=0.005, cap_s=1e9, min_samples=20, block=10, turn_us=1000.0, hot_turn_us=10000.0)
    sizes = {"hot": [], "cold": []}
    timers = {"hot": FakeHotTimer(fake_time, 3000.0), "cold": FakeTimer(fake_time)}
    timers["cold"].turn_sample_us = 3000.0
    for name, timer in timers.items():
        real = timer.samples
        timer.samples = lambda n, real=real, name=name: (sizes[name].append(n), real(n))[1]
    interleave(timers, rule)
    assert set(sizes["hot"]) == {3} and set(sizes["cold"]) == {1}


def test_a_row_throttled_throughout_stops_at_the_cap(fake_time):
    # 0.25 fake seconds a block, cap 1.0 s: the time spent reaches the cap after 4 blocks
    rule = StopRule(rel_ci=0.005, cap_s=1.0, min_samples=50, block=10)
    clocks = FakeClocks([(1500.0, True)] * 100)
    state = interleave({"k": FakeTimer(fake_time, block_s=0.25)}, rule, clocks=clocks)["k"]
    assert state["stopped_by"] == "cap" and _blocks(state) == 4
    assert all(state["throttled"]) and state["spent"] == 1.0


def test_the_cap_counts_only_the_rows_own_blocks(fake_time):
    # two rows that never meet the rule (two modes 3 % apart), 0.25 s and 0.5 s a block, cap 1.0 s:
    # 4 blocks and 2 blocks, though each waits while the other samples
    comb = lambda i: 97.0 if i % 2 else 100.0  # noqa: E731
    rule = StopRule(rel_ci=0.005, cap_s=1.0, min_samples=50, block=10)
    timers = {"fast": FakeTimer(fake_time, comb, 0.25), "slow": FakeTimer(fake_time, comb, 0.5)}
    state = interleave(timers, rule)
    assert (_blocks(state["fast"]), _blocks(state["slow"])) == (4, 2)
    assert state["fast"]["stopped_by"] == state["slow"]["stopped_by"] == "cap"


def test_rows_are_sampled_in_randomized_rounds_until_each_stops(fake_time):
    # "a" meets the rule after 5 blocks; "b" never does and stops at its cap after 12 (0.125 s each)
    log = []
    rule = StopRule(rel_ci=0.005, cap_s=1.5, min_samples=50, block=10)
    timers = {"a": FakeTimer(fake_time, block_s=0.125, log=log, name="a"),
              "b": FakeTimer(fake_time, lambda i: 97.0 if i % 2 else 100.0, 0.125, log, "b")}
    state = interleave(timers, rule, seed=3)
    assert (state["a"]["stopped_by"], _blocks(state["a"])) == ("ci", 5)
    assert (state["b"]["stopped_by"], _blocks(state["b"])) == ("cap", 12)
    rounds = [log[2 * i:2 * i + 2] for i in range(5)]
    assert all(sorted(r) == ["a", "b"] for r in rounds)  # one block of each row per round
    assert len({tuple(r) for r in rounds}) == 2  # in a shuffled order, not a fixed one
    assert log[10:] == ["b"] * 7  # a stopped row gets no more blocks
    # each sample carries its round: a's 5 blocks of 10 in rounds 0-4, b's 12 in rounds 0-11
    assert state["a"]["round"] == [r for r in range(5) for _ in range(10)]
    assert state["b"]["round"] == [r for r in range(12) for _ in range(10)]


def test_the_same_seed_gives_the_same_order(fake_time):
    def order(seed):
        log = []
        timers = {n: FakeTimer(fake_time, log=log, name=n) for n in "abcde"}
        interleave(timers, TIGHT, seed=seed)
        return log

    assert order(1) == order(1) and order(1) != order(2)

    def default_order():
        log = []
        interleave({n: FakeTimer(fake_time, log=log, name=n) for n in "abcde"}, TIGHT)
        return log

    assert default_order() == order(0)  # seed 0 unless told


def test_each_block_runs_in_its_rows_context(fake_time):
    entered, seen = [], []

    @contextlib.contextmanager
    def backend(name):
        entered.append(name)
        yield
        entered.pop()

    class Checked(FakeTimer):
        def samples(self, n):
            seen.append((self.name, list(entered)))
            return super().samples(n)

    timers = {n: Checked(fake_time, name=n) for n in ("sdpa_flash", "wmma")}
    interleave(timers, TIGHT, context_of=lambda n: backend(n) if n.startswith("sdpa") else contextlib.nullcontext())
    assert seen and all(ctx == ([name] if name == "sdpa_flash" else []) for name, ctx in seen)


# --- StopRule.met_by at its edges --------------------------------------------------------------------
#
# n = 100 sorted samples: the 95 % median interval is (x_40, x_61) and the 99 % one (x_37, x_64) (the
# largest r with P(Bin(100, 1/2) <= r - 1) <= 2.5 % is 40: P(<= 39) = 1.8 %, P(<= 40) = 2.8 %; at
# 0.5 %: P(<= 36) = 0.33 %, P(<= 37) = 0.60 %). The median is (x_50 + x_51) / 2.


def _ranked(at40: float, at37: float) -> np.ndarray:
    """100 samples around a median of 100: x_1..x_37 = 100 - at37, x_38..x_40 = 100 - at40,
    x_41..x_60 = 100, x_61..x_63 = 100 + at40, x_64..x_100 = 100 + at37 (shuffled: the rule must
    not depend on the order). So the 95 % interval is 100 -+ at40 and the 99 % one 100 -+ at37."""
    x = np.concatenate([np.full(37, 100 - at37), np.full(3, 100 - at40), np.full(20, 100.0),
                        np.full(3, 100 + at40), np.full(37, 100 + at37)])
    return np.random.default_rng(0).permutation(x)


@pytest.mark.parametrize("half, met", [(0.5, True), (0.5001, False), (0.0, True)])
def test_met_by_at_the_relative_halfwidth(half, met):
    # both intervals +-half: relative half-width half / 100, at most 0.005 <=> half <= 0.5
    assert StopRule(rel_ci=0.005, cap_s=1e9, min_samples=50).met_by(_ranked(half, half)) is met


@pytest.mark.parametrize("at37, met", [(1.0, True), (1.0001, False)])
def test_the_guard_at_twice_the_halfwidth(at37, met):
    # the 95 % interval +-0.1 (0.001 relative) meets rel_ci = 0.005 on its own; the 99 % one must be
    # within 2 x 0.005: at37 / 100 <= 0.01 <=> at37 <= 1
    x = _ranked(0.1, at37)
    assert StopRule(rel_ci=0.005, cap_s=1e9, min_samples=50).met_by(x) is met
    assert StopRule(rel_ci=0.005, cap_s=1e9, min_samples=50, guard_confidence=None).met_by(x)  # no guard
    assert StopRule(rel_ci=0.005, cap_s=1e9, min_samples=50, guard_factor=3.0).met_by(_ranked(0.1, 1.4999))
    assert not StopRule(rel_ci=0.005, cap_s=1e9, min_samples=50, guard_factor=3.0).met_by(_ranked(0.1, 1.5001))
    # the guard's confidence is its own: at 95 % it sees only x_40 and x_61
    assert StopRule(rel_ci=0.005, cap_s=1e9, min_samples=50, guard_confidence=0.95).met_by(_ranked(0.1, 5.0))


@pytest.mark.parametrize("n, met", [(49, False), (50, True)])
def test_met_by_needs_min_samples(n, met):
    assert StopRule(rel_ci=0.005, cap_s=1e9, min_samples=50).met_by([100.0] * n) is met


# --- the throttle filter of a measured shape (lab.studies.measure_shape.measure_shape) -----------------------------------

def test_a_shape_summary_uses_only_unthrottled_samples(monkeypatch):
    real_randn = torch.randn
    monkeypatch.setattr(torch, "randn", lambda *a, device=None, **kw: real_randn(*a, **kw))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda *a: None)
    monkeypatch.setattr(timing, "l2_bytes", lambda: 1 << 30)
    monkeypatch.setattr(timing, "HotTimer", lambda launches: object())
    samples = {"mixed": ([10.0, 10.0, 12.0, 1000.0, 1000.0], [False, False, False, True, True]),
               "hot_throughout": ([10.0] * 3, [True] * 3), "raised": ([10.0] * 2, [False] * 2)}

    def fake_interleave(timers, rule, clocks=None, seed=0, context_of=None):
        state = {n: {"samples": s, "clock_mhz": [1980.0] * len(s), "throttled": t, "stopped_by": "ci",
                     "round": [i // 2 for i in range(len(s))]} for n, (s, t) in samples.items()}
        state["raised"].update(stopped_by=None, error="RuntimeError: retaken 3 times")
        return state

    monkeypatch.setattr(timing, "interleave", fake_interleave)

    class Kernel:
        def launch(self, *a):
            pass

    rows, summary, notes = measure_shape(Shape(1, 2, 32, 64, False), {"mixed": Kernel()}, [], ["hot"],
                                             rule=None, clocks=None, run_id="r", aa_impl=None, seed=0,
                                             progress=lambda s: None)
    assert len(rows) == 8 and [r["throttled"] for r in rows[:5]] == samples["mixed"][1]  # none of "raised"
    assert [r["round"] for r in rows[:5]] == [0, 0, 1, 1, 2]  # each sample's round, as interleave gave it
    (row,) = summary
    assert row["impl"] == "mixed" and row["n"] == 3 and row["median_us"] == 10.0 and row["dropped_throttled"] == 2
    assert row["min_us"] == 10.0 and row["p90_us"] == pytest.approx(11.6)  # of 10, 10, 12
    assert notes["errors"] == {"hot_throughout/hot": "every sample was taken while throttled",
                               "raised/hot": "RuntimeError: retaken 3 times"}


def test_a_runs_rule_limits_cold_turns_as_its_parameters_say():
    from lab.studies.params import RunParams

    assert RunParams().stop_rule().turn_us == 1000.0 and RunParams(cold_turn_us=250).stop_rule().turn_us == 250.0
    assert RunParams(cold_turn_us=0).stop_rule().turn_us is None  # 0: no limit, as runs recorded before it
    assert RunParams(replicates=3, cold_turn_us=250).replicate_rule().turn_us == 250.0
    assert RunParams(replicates=3).replicate_rule().turn_us == 1000.0  # the replicates' rule keeps the default too


def test_a_runs_rule_limits_hot_turns_as_its_parameters_say():
    from lab.studies.params import RunParams

    assert RunParams().stop_rule().hot_turn_us == 4000.0 and RunParams(hot_turn_us=250).stop_rule().hot_turn_us == 250.0
    assert RunParams(hot_turn_us=0).stop_rule().hot_turn_us is None  # 0: no limit, as runs recorded before it
    assert RunParams(replicates=3, hot_turn_us=250).replicate_rule().hot_turn_us == 250.0
    # the cold limit is its own: a hot turn's does not follow COLD_TURN_US, nor the other way round
    assert RunParams(cold_turn_us=250).stop_rule().hot_turn_us == 4000.0
    assert RunParams(hot_turn_us=250).stop_rule().turn_us == 1000.0


def test_a_runs_rule_gives_the_sustained_rows_their_turns_as_its_parameters_say():
    from lab.studies.params import RunParams

    assert RunParams().stop_rule().sustained_turns == timing.SUSTAINED_MIN_TURNS == 3
    assert RunParams(sustained_turns=10).stop_rule().sustained_turns == 10
    assert RunParams(replicates=5, sustained_turns=10).replicate_rule().sustained_turns == 10  # each replicate's
    assert RunParams(sustained_turns=10).stop_rule().min_turns == 1  # hot and cold: one turn may be enough


def test_a_row_stops_no_sooner_than_its_min_turns(fake_time):
    """The sustained mode's rule (min_turns = SUSTAINED_MIN_TURNS): a turn of 60 tight samples meets the CI
    at once, but the row takes a second turn; with min_turns 1 (hot, cold) one turn is enough."""
    rule = StopRule(rel_ci=0.005, cap_s=1e9, min_samples=10, block=60)
    assert len(interleave({"k": FakeTimer(fake_time)}, rule)["k"]["samples"]) == 60
    two = interleave({"k": FakeTimer(fake_time)}, StopRule(**{**rule.__dict__, "min_turns": 2}))["k"]
    assert len(two["samples"]) == 120 and two["round"] == [0] * 60 + [1] * 60 and two["stopped_by"] == "ci"
    assert timing.SUSTAINED_MIN_TURNS >= 2


def test_the_cap_does_not_cut_a_row_short_of_its_min_turns(fake_time):
    """SUSTAINED_TURNS=10 with the replicates' cap of 1 s and turns of 0.4 s: the row takes its ten turns (4 s),
    then stops on the cap; with one turn as enough (hot, cold) the same cap stops it after its third turn."""
    loose = lambda i: 100.0 + (i % 50)  # noqa: E731 - a spread the CI never meets
    rule = StopRule(rel_ci=0.005, cap_s=1.0, min_samples=10, block=60)
    one = interleave({"k": FakeTimer(fake_time, draw=loose, block_s=0.4)}, rule)["k"]
    assert sorted(set(one["round"])) == [0, 1, 2] and one["stopped_by"] == "cap"
    ten = interleave({"k": FakeTimer(fake_time, draw=loose, block_s=0.4)},
                     StopRule(**{**rule.__dict__, "min_turns": 10}))["k"]
    assert sorted(set(ten["round"])) == list(range(10)) and ten["stopped_by"] == "cap"


class LoadClocks(FakeClocks):
    """Clocks with NVML's load reading (lab.measure.clocks.Clocks.load): power, temperature, reasons."""

    def __init__(self):
        super().__init__([])
        self.turns = 0

    def load(self):
        self.turns += 1
        return {"power_w": 600.0 + self.turns, "temp_c": 60.0, "clock_reasons": 4}


def test_each_sample_records_the_load_at_the_end_of_its_turn(fake_time):
    state = interleave({"k": FakeTimer(fake_time)}, TIGHT, clocks=LoadClocks())["k"]
    assert _blocks(state) == 5
    assert state["power_w"] == [601.0 + b for b in range(5) for _ in range(10)]
    assert state["temp_c"] == [60.0] * 50 and state["clock_reasons"] == [4] * 50
    plain = interleave({"k": FakeTimer(fake_time)}, TIGHT, clocks=FakeClocks([]))["k"]
    assert plain["power_w"] == [None] * 50  # clocks without load(): None, as without NVML
