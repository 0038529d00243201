"""One shape measured: every implementation (the run's kernels and its peers) sampled in one
randomized interleave per mode until the stopping rule, then summarised.

Used by a run's timing stage, the factorial, a tuning worker and `python -m lab bench`: the one
timing path of the study.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import replace

from lab.kernels.shape import DTYPE_BYTES, Shape

# a row whose every sample the rule of its day dropped (lab.report.sections.results rereads it by today's)
ALL_THROTTLED = "every sample was taken while throttled"
AA_SUFFIX = "__aa"  # the A/A twin: one implementation measured twice in the same interleave


def input_sets(shape: Shape, l2_bytes: int) -> int:
    """How many input sets hot mode rotates through: enough that they do not fit in L2 together."""
    elem = DTYPE_BYTES[shape.dtype]
    set_bytes = 2 * shape.B * (shape.H + shape.H_kv) * shape.S * shape.D * elem  # Q and O; K and V (H_kv heads)
    return 1 if set_bytes >= l2_bytes else min(32, math.ceil(2 * l2_bytes / set_bytes))


def summary_row(shape: Shape, impl: str, mode: str, kept: dict, stopped_by: str, dropped_throttled: int,
                input_sets: int) -> dict:
    """summary.csv's row of one (impl, shape, mode) from its unthrottled samples by replicate
    ({replicate: latencies}): percentiles, mean and min of every sample; the median and its CI
    over the replicates (lab.measure.stats.replicated_median; one replicate: the median and its
    order-statistic CI)."""
    from lab.measure import stats

    summ = stats.summarize(stats.pooled(kept))
    if len(kept) > 1:
        summ["median_us"] = stats.replicated_median(kept)
    lo, hi = stats.replicated_median_ci(kept)
    dims = (shape.B, shape.H, shape.S, shape.D)
    return dict(impl=impl, **shape_columns(shape), mode=mode, **summ,
                ci_lo_us=lo, ci_hi_us=hi, tflops=stats.tflops(*dims, shape.causal, summ["median_us"]),
                gbps=stats.effective_gbps(*dims, summ["median_us"], DTYPE_BYTES[shape.dtype], shape.H_kv),
                stopped_by=stopped_by, dropped_throttled=dropped_throttled, input_sets=input_sets)


def shape_columns(shape: Shape) -> dict:
    """A shape as a table row's columns (lab.measure.records.SHAPE_COLUMNS; Shape.from_row reads them)."""
    return dict(B=shape.B, H=shape.H, S=shape.S, D=shape.D, causal=shape.causal, H_kv=shape.H_kv,
                dtype=shape.torch_dtype_name)


def _not_taken(attn, shape: Shape) -> str:
    """Why a kernel (KernelAttention, a tuned dispatch) cannot take the shape's inputs, ''; one
    without the question (a stand-in) takes every shape."""
    ask = getattr(attn, "not_taken", None)
    return ask(shape) if ask is not None else ""


def measure_shape(shape: Shape, kernels: dict, peers: list, modes, rule, clocks, run_id: str,
                  aa_impl: str | None, seed: int, progress=print):
    """Returns (sample rows, summary rows, notes) for one shape; never raises for one impl."""
    from lab.measure import timing

    notes = {"shape": shape.id, "unsupported": {}, "errors": {}, "not_taken": {}}
    n_sets = input_sets(shape, timing.l2_bytes())
    sets = [shape.random_inputs(outputs=True) for _ in range(n_sets)]

    launches, contexts = {}, {}
    for name, attn in kernels.items():
        # a kernel that does not take the shape's dtype or K/V heads (its library, as its manifest
        # declares) is left out and recorded as not taken (a peer that cannot run it: unsupported)
        if why := _not_taken(attn, shape):
            notes["not_taken"][name] = why
            continue
        launches[name] = [lambda a=attn, t=t: a.launch(t[0], t[1], t[2], t[3], shape.causal) for t in sets]
    for peer in peers:
        reason = peer.unsupported_reason(*sets[0][:3], shape.causal, None)
        if reason:
            notes["unsupported"][peer.name] = reason
            continue
        launches[peer.name] = [peer.bind(t[0], t[1], t[2], shape.causal, None) for t in sets]
        contexts[peer.name] = peer.context
    if aa_impl in launches:
        launches[aa_impl + AA_SUFFIX] = launches[aa_impl]
        if aa_impl in contexts:
            contexts[aa_impl + AA_SUFFIX] = contexts[aa_impl]

    def summarize(name, mode, kept, stopped_by, dropped):
        return summary_row(shape, name, mode, {0: kept}, stopped_by, dropped, 1 if mode == "cold" else n_sets)

    sample_rows, summary_rows = time_modes(launches, contexts, modes, rule, clocks, seed, notes,
                                           dict(run_id=run_id, **shape_columns(shape)), summarize, progress)
    return sample_rows, summary_rows, notes


def time_modes(launches: dict, contexts: dict, modes, rule, clocks, seed: int, notes: dict, columns: dict, summarize,
               progress=print) -> tuple[list, list]:
    """Every implementation's launches ({name: [launch per input set]}) sampled in one randomized
    interleave per mode until the stopping rule (the sustained mode after its lead-in, at least
    the rule's sustained_turns turns a row): (sample rows, summary rows). `contexts`: {name: a context
    factory its samples run in}; `columns`: what every sample row starts with (the run and the
    shape's columns); `summarize(name, mode, kept, stopped_by, dropped)`: a summary row from the
    unthrottled samples. Errors and rows wholly throttled go to notes["errors"]; one failing
    implementation never stops the others. The one timing loop of prefill and decode shapes."""
    import torch

    from lab.measure import timing

    def context_of(name):
        return contexts[name]() if name in contexts else contextlib.nullcontext()

    sample_rows, summary_rows = [], []
    for mode in modes:
        t0 = time.perf_counter()
        timers = {}
        timer_of = {"hot": timing.HotTimer, "cold": timing.ColdTimer, "sustained": timing.SustainedTimer}[mode]
        for name, ls in launches.items():
            try:
                with context_of(name):
                    timers[name] = timer_of(ls)
            except Exception as exc:  # noqa: BLE001 - one failing impl never takes the run down
                notes["errors"][f"{name}/{mode}"] = f"{type(exc).__name__}: {exc}"
        mode_rule = rule
        if mode == "sustained":  # from idle to load, then turns of back-to-back replays, rule.sustained_turns or more
            with contextlib.ExitStack() as stack:
                for name in timers:
                    stack.enter_context(context_of(name))
                timing.sustained_lead_in(timers)
            mode_rule = replace(rule, min_turns=rule.sustained_turns)
            notes["sustained"] = {"turn_ms": timing.SUSTAINED_TURN_MS, "settle_ms": timing.SUSTAINED_SETTLE_MS,
                                  "replay_us": timing.SUSTAINED_REPLAY_US, "lead_in_s": timing.SUSTAINED_LEAD_IN_S,
                                  "min_turns": rule.sustained_turns}  # what the report says of the mode
        state = timing.interleave(timers, mode_rule, clocks=clocks, seed=seed, context_of=context_of)
        for name, st in state.items():
            if st.get("error"):  # its samples so far are dropped with it: a row is measured whole or not at all
                notes["errors"][f"{name}/{mode}"] = st["error"]
                continue
            n = len(st["samples"])
            rounds = st.get("round") or [None] * n
            loads = zip(*(st.get(key) or [None] * n
                          for key in ("power_w", "temp_c", "clock_reasons", "clock_mean_mhz")))
            for i, (lat, clk, thr, rnd, (power, temp, reasons, clk_mean)) in enumerate(
                    zip(st["samples"], st["clock_mhz"], st["throttled"], rounds, loads)):
                sample_rows.append(dict(columns, impl=name, mode=mode, sample=i, latency_us=lat, sm_clock_mhz=clk,
                                        throttled=thr, round=rnd, power_w=power, temp_c=temp, clock_reasons=reasons,
                                        sm_clock_mean_mhz=clk_mean))
            kept = [x for x, thr in zip(st["samples"], st["throttled"]) if not thr]
            if not kept:
                notes["errors"][f"{name}/{mode}"] = ALL_THROTTLED
                continue
            summary_rows.append(summarize(name, mode, kept, st["stopped_by"], len(st["samples"]) - len(kept)))
        progress(f"    {mode:<4} {len(timers)} impls in {time.perf_counter() - t0:.1f} s")
        del timers
        if torch.cuda.is_available():
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    return sample_rows, summary_rows
