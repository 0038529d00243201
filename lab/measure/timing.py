"""Device timing with CUDA events, the host kept out of the timed region.

Three modes:
- hot: `reps` back-to-back launches captured in one CUDA graph; a sample is one replay, timed
  by events around it, divided by reps. Python, dispatch and launch overhead happen at capture
  time, not per launch, so a few-microsecond kernel is not launch-bound. A block starts behind a
  1 ms sleep and a turn of the round robin takes at most StopRule.hot_turn_us of GPU time, so a
  hot sample is a burst at the clock an idle GPU boosts to.
- cold: before every launch a buffer twice the size of L2 is read (L2Flusher), so the kernel starts
  with its inputs in DRAM and no dirty lines in the L2 to write back (runs before env.json's cold_flush
  overwrote the buffer, as nvbench does, and each cold launch paid that write-back; see L2Flusher); a
  sample is one launch between two events. A turn of
  the round robin takes at most StopRule.turn_us of GPU time (one sample at launches of a
  millisecond and more), so that no one clock state decides a row's median.
- sustained: the load real training and serving put on the GPU, attention back to back for
  seconds, at the clocks the GPU holds at its power limit (SustainedTimer). The rows of a shape
  take turns of SUSTAINED_TURN_MS of back-to-back replays each, the GPU never idle between them,
  after a lead-in (sustained_lead_in) that takes the GPU from idle to load; the first
  SUSTAINED_SETTLE_MS of every turn are run and not kept.

In both modes all of a block's samples are enqueued before the first is read back, so the GPU
never waits on the host inside a timed region: a cold block behind a hold (lab.measure.hold: a
kernel that spins until the host has enqueued the block, so the GPU idles no longer than the
host needs), a hot block behind a short GPU sleep (see HotTimer for why not the hold).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

from lab.measure.clocks import SUSTAINED_SLOWDOWN_MASK

Launch = Callable[[], None]

SLEEP_CYCLES = 2_000_000  # ~1 ms at 1.8 GHz: what a hot block, an estimate and the fallback hold wait behind
# Not shorter: behind 0.3 ms, which still covers a hot block's enqueueing (0.08-0.14 ms on an H100), the
# GPU idled less between blocks and ran the hot samples at lower clocks (mean 1932 against 1967 MHz):
# models rows 1 % slower, their spread within a replicate twice as wide, 2.5 times as many rows at the
# cap, for 2 s of the set's time (data/explorations/2026-11-26-models-set-timing-ab).


def _torch():
    import torch

    return torch


def l2_bytes() -> int:
    torch = _torch()
    return int(torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size)


# How the cold mode empties the L2 (L2Flusher's kinds); env.json's cold_flush records the kind and flush_probe's
# reading.
FLUSH_KINDS = ("read", "write")
COLD_FLUSH = "read"


def recorded_flush(env: dict) -> str:
    """The flush a run's cold mode used, from its env.json: cold_flush's kind, or "write" for the runs before it."""
    return (env.get("cold_flush") or {}).get("kind", "write")


class L2Flusher:
    """Empties the L2 of a launch's data, enqueued right before a cold launch, through a buffer of twice the L2's size:
    - "read" (COLD_FLUSH): the buffer is read (one reduction), which evicts every line the L2 held (dirty ones are
      written back then, outside the timed launch) and leaves it holding clean lines, which the launch evicts for
      free;
    - "write": the buffer is overwritten (as nvbench does, and the runs before env.json's cold_flush did), which
      leaves up to the L2's size of dirty lines, whose write-back to DRAM the timed launch then pays beside its own
      traffic where it keeps the DRAM busy: cold 10.1 µs above hot (the median over 204 implementation x shape
      pairs) at the decode shapes whose cache streams from HBM in an H200 run
      (data/explorations/2026-12-04-cold-flush-writeback)."""

    def __init__(self, kind: str = COLD_FLUSH):
        if kind not in FLUSH_KINDS:
            raise ValueError(f"L2Flusher kind {kind!r}: one of {', '.join(FLUSH_KINDS)}")
        torch = _torch()
        self.kind = kind
        self.buffer = torch.zeros(2 * max(l2_bytes(), 1 << 20) // 16 * 16, dtype=torch.uint8, device="cuda")
        self._words = self.buffer.view(torch.int32)

    def __call__(self) -> None:
        if self.kind == "write":
            self.buffer.fill_(1)
        else:
            self._words.amax()  # its one-element result is not read: the reads are the point


def flush_probe(flusher: L2Flusher | None = None, repeats: int = 5) -> dict:
    """Whether the cold mode's flush empties the L2, measured (env.json's cold_flush): a probe of half the L2 is
    overwritten (its lines dirty in the L2), then read back, straight away (from the L2) and with the flush between
    (from DRAM where the flush evicted it): the medians of `repeats` samples each, µs."""
    import statistics

    torch = _torch()
    flusher = flusher or L2Flusher()
    probe = torch.empty(l2_bytes() // 2 // 16 * 16, dtype=torch.uint8, device="cuda")
    words = probe.view(torch.int32)

    def read_us(flush: bool) -> float:
        def before():
            probe.fill_(1)
            if flush:
                flusher()

        return statistics.median(timed_blocks(repeats, lambda: words.amax(), before=before, hold=None))

    read_us(True)  # the warm-up: the reduction's first call
    return {"kind": flusher.kind, "probe_bytes": int(probe.numel()), "l2_read_us": read_us(False),
            "flushed_read_us": read_us(True)}


def _gpu_sleep():
    """torch.cuda._sleep, which enqueues GPU spinning ahead of a block of samples (SLEEP_CYCLES).
    Without it the host could fall behind the GPU inside a timed region, so its absence is an
    error, never a silent skip."""
    torch = _torch()
    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep is None:
        raise RuntimeError(f"torch {torch.__version__} has no torch.cuda._sleep: lab.measure.timing needs it to "
                           "keep the host out of timed regions (a block's launches are enqueued behind a GPU sleep)")
    return lambda: sleep(SLEEP_CYCLES)


HOLD_TRIES = 3  # a block whose hold timed out is retaken this many times before the run is told


def _new_event():
    return _torch().cuda.Event(enable_timing=True)


def timed_blocks(n: int, body: Launch, before: Launch | None = None, hold="default") -> list[float]:
    """n samples (us) of `body` between two events, `before` enqueued untimed ahead of each.
    Everything is enqueued behind a hold (lab.measure.hold; a fixed GPU sleep where the hold is
    unavailable, or with hold=None) before the first result is read back. The hold is released
    even when a launch raises, and a block whose hold timed out (the host took longer than
    lab.measure.hold.TIMEOUT_S to enqueue it) is taken again."""
    torch = _torch()
    if hold == "default":
        from lab.measure import hold as holds

        hold = holds.default()
    sleep = _gpu_sleep() if hold is None else None
    stream = torch.cuda.current_stream()
    events = [(_new_event(), _new_event()) for _ in range(n)]
    for _ in range(HOLD_TRIES):
        if hold is None:
            sleep()
        else:
            hold.enqueue(stream.cuda_stream)
        try:
            for start, end in events:
                if before is not None:
                    before()
                start.record(stream)
                body()
                end.record(stream)
        finally:
            if hold is not None:
                hold.release()
        events[-1][1].synchronize()
        if hold is None or not hold.timed_out():
            return [s.elapsed_time(e) * 1e3 for s, e in events]
    raise RuntimeError(f"a block of {n} samples was retaken {HOLD_TRIES} times: each time the host took over "
                       f"lab.measure.hold.TIMEOUT_S to enqueue it behind the hold (is the CPU oversubscribed?)")


def estimate_us(launch: Launch, launches: int = 5, enough_us: float = 1000.0) -> float:
    """Rough time per launch (warm), used only to size graphs and budgets: the mean of a block of
    launches behind the sleep, as many as bring it to about `enough_us` by the warm-up launch's
    time (at most `launches`, at least one). Five launches every time cost the models set 4.7 s of
    GPU time over three replicates, beside 16.7 s of hot samples: its launches take 0.07-7 ms
    (data/explorations/2026-11-26-models-set-timing-ab). The warm-up's time may hold host work (a first
    call's compile) and only ever errs long, which costs the block launches, not its accuracy."""
    torch = _torch()
    stream = torch.cuda.current_stream()
    start, end = _new_event(), _new_event()
    start.record(stream)
    launch()  # the warm-up: first-call costs, and the size of the block below
    end.record(stream)
    end.synchronize()
    n = max(1, min(launches, math.ceil(enough_us / max(start.elapsed_time(end) * 1e3, 0.5))))
    start, end = _new_event(), _new_event()
    _gpu_sleep()()
    start.record(stream)
    for _ in range(n):
        launch()
    end.record(stream)
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / n


def capture_graph(launches: list, reps: int):
    """A CUDA graph of `reps` launches cycling through `launches` (warmed up on a side stream, as
    capture requires), replayed once."""
    torch = _torch()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for launch in launches:
            launch()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(reps):
            launches[i % len(launches)]()
    graph.replay()
    torch.cuda.synchronize()
    return graph


@dataclass
class HotTimer:
    """A CUDA graph of `reps` launches; `samples(n)` replays it n times.

    A hot block waits behind the fixed GPU sleep, not the hold of lab.measure.hold: replaying
    cuDNN's captured graph behind the hold blocked the host until the hold gave up (on an H100,
    `data/explorations/2026-11-25-timing-overhead/`), and with both events captured inside the
    graph instead, a sample read back before the next is replayed put the GPU idle between
    samples and read up to 5 % slower at launches of 50 us and more (no longer back to back).

    `launch` may be a list of launches over different input sets: the graph cycles through them,
    so inputs that would fit in L2 are not simply re-read from it launch after launch.

    `turn_sample_us`, one replay's GPU time, lets the stopping rule keep a turn within
    StopRule.hot_turn_us: where a turn of the rule's block size ran 5-30 ms back to back (launches of
    1.5-3 ms), the SM clock fell (FA3: 1785-1935 MHz median in a run) and the hot medians read 2-10 %
    slower than in turns of one sample (data/explorations/2026-11-28-hot-turn-length/). Shorter
    launches keep most of the rule's block: a sample is about 1 ms, and single-replay turns would put
    a sleep before every sample.
    """

    launch: Launch | list[Launch]
    target_sample_us: float = 1000.0
    max_reps: int = 500

    def __post_init__(self):
        launches = self.launch if isinstance(self.launch, list) else [self.launch]
        est = estimate_us(launches[0])
        reps = int(max(1, min(self.max_reps, self.target_sample_us // max(est, 0.5))))
        self.reps = max(reps, len(launches)) if reps > 1 else 1
        self.graph = capture_graph(launches, self.reps)
        self.turn_sample_us = est * self.reps

    def samples(self, n: int) -> list[float]:
        """n samples in microseconds per launch."""
        return [us / self.reps for us in timed_blocks(n, self.graph.replay, hold=None)]


@dataclass
class ColdTimer:
    """One launch per sample, L2 flushed before each. `turn_sample_us`, the GPU time of one sample
    (flush and launch, estimated), lets the stopping rule size its turns (StopRule.turn_us)."""

    launch: Launch | list[Launch]
    flusher: L2Flusher | None = None

    def __post_init__(self):
        if isinstance(self.launch, list):  # L2 is flushed anyway: one input set is enough
            self.launch = self.launch[0]
        self.flusher = self.flusher or L2Flusher()
        launch, flush = self.launch, self.flusher
        self.turn_sample_us = estimate_us(lambda: (flush(), launch()), launches=2)  # also the warm-up

    def samples(self, n: int) -> list[float]:
        """n samples in microseconds, each one launch after an L2 flush."""
        return timed_blocks(n, self.launch, before=self.flusher)


# The sustained mode's timing, measured on an H200 (data/explorations/2026-11-27-fa3-peer, call 2):
# back to back, latencies rise 11-19 % over the first replays' as the SM clock falls from 1980 to
# 1440-1785 MHz at the 700 W limit, most of it within the first half second; implementations
# alternating in 200 ms turns carry the previous one's clock state for up to 50 ms (7 % off), and are
# within 0.5-1.1 % of their own value after 8 s alone from 100 ms into a turn on. In a run of seven rows
# (call 3: 250 ms turns, 100 ms settle, two turns a row) a row's turns still differed by about 3 % (the
# rows before it draw from 1440 to 1815 MHz), and the end's ratios to the peers had 95 % intervals of
# +-5 % over three replicates: hence longer turns, a longer settle, a third turn, and fewer rows.
SUSTAINED_TURN_MS = 400.0  # GPU time of one row's turn: back-to-back replays
SUSTAINED_SETTLE_MS = 150.0  # the first part of each turn, run and not kept (the previous row's clock state)
SUSTAINED_REPLAY_US = 5000.0  # a sustained sample: one replay of a graph of about this much GPU time
SUSTAINED_LEAD_IN_S = 1.0  # a shape's rows back to back before its first kept turn (from idle to load)
SUSTAINED_MIN_TURNS = 3  # a sustained row stops no sooner than its third turn (three moments of the load)


@dataclass
class SustainedTimer:
    """A turn of the sustained mode: replays of a CUDA graph of about `replay_us` of launches, back to
    back for `turn_ms` of GPU time with nothing ahead of them (the GPU keeps the load of the turn before);
    the replays that start `settle_ms` or more into the turn are the samples, each its time per launch.
    `launch` may be a list over input sets, cycled as HotTimer cycles them."""

    launch: Launch | list[Launch]
    turn_ms: float = SUSTAINED_TURN_MS
    settle_ms: float = SUSTAINED_SETTLE_MS
    replay_us: float = SUSTAINED_REPLAY_US
    max_reps: int = 2000

    def __post_init__(self):
        launches = self.launch if isinstance(self.launch, list) else [self.launch]
        est = estimate_us(launches[0])
        self.reps = max(len(launches), int(max(1, min(self.max_reps, math.ceil(self.replay_us / max(est, 0.5))))))
        self.graph = capture_graph(launches, self.reps)
        self.replays = max(2, math.ceil(self.turn_ms * 1e3 / max(est * self.reps, 1.0)))

    def replay(self) -> None:
        self.graph.replay()

    def samples(self, n: int = 0) -> list[float]:
        """One turn's samples (us per launch); `n`, the stop rule's block size, is not used: a turn is
        a length of GPU time, not a count."""
        torch = _torch()
        stream = torch.cuda.current_stream()
        events = [(_new_event(), _new_event()) for _ in range(self.replays)]
        for start, end in events:
            start.record(stream)
            self.graph.replay()
            end.record(stream)
        events[-1][1].synchronize()
        first = events[0][0]
        return [s.elapsed_time(e) * 1e3 / self.reps for s, e in events if first.elapsed_time(s) >= self.settle_ms]


def sustained_lead_in(timers: dict, seconds: float = SUSTAINED_LEAD_IN_S) -> None:
    """The rows' graphs replayed back to back, in turn, for about `seconds` of wall time and not kept:
    what takes the GPU from idle (or from the hot and cold modes' bursts) to the load of the mode."""
    if not timers:
        return
    torch = _torch()
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        for timer in timers.values():
            for _ in range(4):
                timer.replay()
        torch.cuda.current_stream().synchronize()


# --- interleaved sampling with adaptive stopping ------------------------------------------


@dataclass
class StopRule:
    """Sample until the 95% CI of the median is within +-rel_ci of it, or the time cap; never stop
    before min_samples. A run's values come from lab.studies.params.RunParams, a tuning run's from
    TuneParams.

    A guard goes with it: the 99% CI must also lie within +-2 rel_ci. Latencies can be
    multimodal (a comb of modes a tile's time apart, where unequal CTAs finish in varying
    order); a median near a gap between two modes can pass the 95% test while a few percent of
    bootstrap resamples put it in the next mode, which widens the speedup intervals computed
    later. The guard keeps such a row sampling; a unimodal row passes both tests together.
    """

    rel_ci: float
    cap_s: float  # wall time per (implementation, shape, mode)
    min_samples: int
    block: int = 10  # samples per turn of the round robin ...
    block_after_minimum: int | None = None  # ... and once a row has min_samples (None: block)
    guard_confidence: float | None = 0.99  # None: no guard (runs recorded before it existed)
    guard_factor: float = 2.0
    # A turn of a timer that states its sample's GPU time (ColdTimer.turn_sample_us) takes at most
    # this many microseconds of it, and at least one sample (None or 0: no limit, as runs recorded
    # before it). Why: at cold launches of a millisecond and more, a turn's samples share one GPU
    # clock state and the state drifts as the GPU warms, so three or nine samples a turn made a few
    # states decide a row's median (data/explorations/2026-11-26-cold-drift/).
    turn_us: float | None = None
    # The same for a hot turn (HotTimer.turn_sample_us; None: no limit, as runs recorded before it),
    # so that at launches of milliseconds a burst is one launch (see HotTimer).
    hot_turn_us: float | None = None
    # A row stops no sooner than its min_turns-th turn, the cap included (1: a turn's samples may be enough, as
    # in hot and cold). The sustained mode's rows take sustained_turns (RunParams.sustained_turns, default
    # SUSTAINED_MIN_TURNS): its turns, not its samples, carry the power cap's wander, so more of them is what
    # narrows its intervals (data/explorations/2026-12-05-landing-step67-h100-partial).
    min_turns: int = 1
    sustained_turns: int = SUSTAINED_MIN_TURNS

    def block_size(self, taken: int, sample_us: float | None = None, hot: bool = False) -> int:
        """Samples in a row's next turn, `taken` samples into it: small turns spread the minimum over
        several moments of the run (the GPU's clock state changes between them), larger ones after it
        keep the per-turn cost down where a row needs many samples. `sample_us`: one sample's GPU
        time, where the timer states it; the turn then takes at most turn_us of it (hot_turn_us for a
        `hot` timer's)."""
        n = self.block if self.block_after_minimum is None or taken < self.min_samples else self.block_after_minimum
        budget = self.hot_turn_us if hot else self.turn_us
        if budget and sample_us:
            n = max(1, min(n, int(budget / sample_us)))  # int() truncates: floor of a positive ratio
        return n

    def met_by(self, samples) -> bool:
        from lab.measure.stats import relative_ci_halfwidth

        if len(samples) < self.min_samples or relative_ci_halfwidth(samples) > self.rel_ci:
            return False
        return (self.guard_confidence is None
                or relative_ci_halfwidth(samples, self.guard_confidence) <= self.guard_factor * self.rel_ci)


def interleave(timers: dict, rule: StopRule, clocks=None, seed: int = 0, context_of=None):
    """Sample every timer in randomized round-robin order until each meets the stop rule.

    timers: {impl: HotTimer | ColdTimer}. context_of(impl) gives the context manager a block of
    samples must run in (SDPA backend selection), entered outside the timed region.
    Returns {impl: {"samples": [...], "clock_mhz": [...], "throttled": [...], "round": [...],
    "power_w": [...], "temp_c": [...], "clock_reasons": [...], "clock_mean_mhz": [...], "stopped_by": str}},
    "round" the round of the round robin each sample was taken in (0, 1, ...; one turn of every row still
    sampling a round), so that two rows can be compared round by round, the power, temperature and clock
    event reasons NVML gave at the end of the sample's turn (None without it), "throttled" whether a thermal or
    hardware slowdown was active before or after its block (a sustained turn: a hardware slowdown at its end, where
    NVML gave the reasons; clocks.SUSTAINED_SLOWDOWN_NAMES), and "clock_mean_mhz" a
    sustained turn's mean SM clock over its kept part (clocks.during's trace after the timer's settle_ms;
    None for other timers or without it); an implementation whose sampling raised stops there with
    "error" set (its message) instead.
    """
    import contextlib
    import random

    rng = random.Random(seed)
    state = {name: {"samples": [], "clock_mhz": [], "throttled": [], "round": [], "power_w": [], "temp_c": [],
                    "clock_reasons": [], "clock_mean_mhz": [], "stopped_by": None, "spent": 0.0} for name in timers}
    loaded = getattr(clocks, "load", None)  # NVML's load reading (None without clocks, or for fakes without it)
    traced = getattr(clocks, "during", None)  # the clock through a sustained turn (Clocks.during)
    active = list(timers)
    round_no = -1
    while active:
        round_no += 1
        rng.shuffle(active)
        for name in list(active):
            st = state[name]
            ctx = context_of(name) if context_of else contextlib.nullcontext()
            t0 = time.perf_counter()
            before = clocks.read() if clocks else (None, False)
            settle_ms = getattr(timers[name], "settle_ms", None)  # a sustained turn's: its clock is traced
            trace = traced() if traced and settle_ms is not None else None
            try:
                with ctx, trace or contextlib.nullcontext():
                    n = rule.block_size(len(st["samples"]), getattr(timers[name], "turn_sample_us", None),
                                        hot=isinstance(timers[name], HotTimer))
                    block = timers[name].samples(n)
            except Exception as exc:  # noqa: BLE001 - one failing implementation never ends the others' sampling
                st["error"] = f"{type(exc).__name__}: {exc}"
                active.remove(name)
                continue
            after = clocks.read() if clocks else (None, False)
            load = loaded() if loaded else {}
            st["spent"] += time.perf_counter() - t0
            clock = min((c for c in (before[0], after[0]) if c is not None), default=None)
            st["samples"] += block
            st["clock_mhz"] += [clock] * len(block)
            if settle_ms is not None and load.get("clock_reasons") is not None:
                # a sustained turn: dropped for a hardware slowdown at its end alone (clocks.SUSTAINED_SLOWDOWN_MASK)
                slowed = bool(int(load["clock_reasons"]) & SUSTAINED_SLOWDOWN_MASK)
            else:
                slowed = before[1] or after[1]
            st["throttled"] += [slowed] * len(block)
            st["round"] += [round_no] * len(block)
            for key in ("power_w", "temp_c", "clock_reasons"):
                st[key] += [load.get(key)] * len(block)
            st["clock_mean_mhz"] += [trace.mean_after(settle_ms / 1e3) if trace else None] * len(block)
            kept = [x for x, thr in zip(st["samples"], st["throttled"]) if not thr]
            if len(set(st["round"])) >= rule.min_turns and rule.met_by(kept):
                st["stopped_by"] = "ci"
            elif st["spent"] >= rule.cap_s and len(set(st["round"])) >= rule.min_turns:
                st["stopped_by"] = "cap"
            if st["stopped_by"]:
                active.remove(name)
    return state
