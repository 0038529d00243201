"""One decode shape measured (issue 50): every decode step and decode peer sampled in one randomized
interleave per mode until the stopping rule, through the loop the prefill shapes use
(lab.studies.measure_shape.time_modes), and summarised with the bandwidth a call achieves.

A decode call's time is bound by the bytes it must move (lab.kernels.decode.DecodeShape.bytes_moved: the
valid K/V read once, Q read, O written), so a row's summary gives them over its median (`gbps`, 1e9
bytes a second) beside the latency; the report compares that with the GPU's copy bandwidth
(`copy_bandwidth`, read plus write of a 256 MB buffer, measured in the same process).
"""

from __future__ import annotations

import math

from lab.kernels.decode import DecodeShape
from lab.kernels.shape import DTYPE_BYTES
from lab.studies.measure_shape import time_modes

# The columns that name a decode shape in a table (DecodeShape's fields; `spec` rebuilds it).
DECODE_SHAPE_COLUMNS = ["B", "H", "H_kv", "D", "cache_len", "q_len", "mixed", "page_size", "dtype"]
COPY_BYTES = 256 << 20  # the copy reference's buffer: far past any L2


def decode_columns(shape: DecodeShape) -> dict:
    """A decode shape as a table row's columns (DECODE_SHAPE_COLUMNS; page_size 0 where unpaged)."""
    return dict(B=shape.B, H=shape.H, H_kv=shape.H_kv, D=shape.D, cache_len=shape.cache_len, q_len=shape.q_len,
                mixed=shape.mixed, page_size=shape.page_size or 0, dtype=shape.dtype)


def decode_input_sets(shape: DecodeShape, l2_bytes: int) -> int:
    """How many input sets hot mode rotates through: enough that they do not fit in L2 together (a
    cache of Falcon-7B's single K/V head fits it: several sets, so hot mode does not read it from L2
    launch after launch)."""
    set_bytes = shape.cache_bytes + 2 * shape.B * shape.q_len * shape.H * shape.D * DTYPE_BYTES[shape.dtype]  # + q, out
    return 1 if set_bytes >= l2_bytes else min(32, math.ceil(2 * l2_bytes / set_bytes))


def decode_summary_row(shape: DecodeShape, impl: str, mode: str, kept: list, stopped_by: str, dropped: int,
                       input_sets: int) -> dict:
    """A decode row's summary: percentiles, mean and min, the median's order-statistic CI, and the
    bytes the call must move over the median (gbps)."""
    from lab.measure import stats

    summ = stats.summarize(kept)
    lo, hi = stats.replicated_median_ci({0: kept})
    return dict(impl=impl, **decode_columns(shape), mode=mode, **summ, ci_lo_us=lo, ci_hi_us=hi,
                bytes_moved=shape.bytes_moved(), gbps=shape.bytes_moved() / (summ["median_us"] * 1e3),
                stopped_by=stopped_by, dropped_throttled=dropped, input_sets=input_sets)


def _kernel_launch(fn, x: dict, device):
    """A decode step's launch on one input set, its workspace allocated here (outside the timing)."""
    import torch

    need = fn.workspace_bytes(x["q"], x["k_cache"], x["block_table"])
    workspace = torch.empty(need, dtype=torch.uint8, device=device) if need > 0 else None
    args = (x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"], x["out"])
    return lambda: fn.launch(*args, workspace=workspace)


def measure_decode_shape(shape: DecodeShape, kernels: dict, peers: list, modes, rule, clocks, run_id: str,
                         seed: int, progress=print, device: str = "cuda", generator=None):
    """(sample rows, summary rows, notes) for one decode shape: the decode steps (`kernels`: {name:
    lab.kernels.decode_attention.DecodeAttention}) and `peers` (lab.measure.decode_peers) in one
    interleave per mode; a peer that cannot take the call (SDPA and a paged cache) is recorded with
    its reason, never dropped silently. Never raises for one implementation."""
    from lab.measure import timing

    notes = {"shape": shape.id, "unsupported": {}, "errors": {}, "not_taken": {}}
    n_sets = decode_input_sets(shape, timing.l2_bytes())
    sets = [shape.random_inputs(device=device, generator=generator) for _ in range(n_sets)]
    call = ("q", "k_cache", "v_cache", "cache_lens", "block_table")
    launches, contexts = {}, {}
    for name, fn in kernels.items():
        try:
            launches[name] = [_kernel_launch(fn, x, device) for x in sets]
        except Exception as exc:  # noqa: BLE001 - one failing step never takes the shape down
            notes["errors"][f"{name}/setup"] = f"{type(exc).__name__}: {exc}"
    for peer in peers:
        if reason := peer.unsupported_reason(*(sets[0][k] for k in call)):
            notes["unsupported"][peer.name] = reason
            continue
        launches[peer.name] = [peer.bind(*(x[k] for k in call)) for x in sets]
        contexts[peer.name] = peer.context

    def summarize(name, mode, kept, stopped_by, dropped):
        return decode_summary_row(shape, name, mode, kept, stopped_by, dropped, 1 if mode == "cold" else n_sets)

    sample_rows, summary_rows = time_modes(launches, contexts, modes, rule, clocks, seed, notes,
                                           dict(run_id=run_id, **decode_columns(shape)), summarize, progress)
    return sample_rows, summary_rows, notes


# The copy's lead-in: back-to-back copies, untimed for the bar but recorded, before its samples. On an H100 the
# first 6-10 samples (about 5-9 ms of copying) after a run's decode checks read 2,580-2,590 GB/s, then every later
# one 3,010-3,030, whether the GPU had slept 2 s or its allocator's cache been emptied in between; without a
# lead-in the median of 15 fell on the slow ones and two recorded runs held target 1 to a bar 11-15 % low
# (data/explorations/2026-12-07-copy-reference, calls 2 and 3). Five times the longest slow stretch seen.
COPY_LEAD_IN_US = 50_000.0


def copy_timer():
    """A HotTimer over a copy of a fresh pair of COPY_BYTES buffers, device to device (on the GPU)."""
    import torch

    from lab.measure import timing

    src = torch.empty(COPY_BYTES, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    return timing.HotTimer(lambda: dst.copy_(src))


def copy_bandwidth(samples: int = 15, lead_in_us: float = COPY_LEAD_IN_US, timer=None) -> dict:
    """The GPU's copy bandwidth: read plus write of a COPY_BYTES buffer, device to device, the median of
    `samples` hot samples (a CUDA graph of back-to-back copies) taken after a lead-in of about `lead_in_us`
    of the same samples: the bar a decode call's bytes are held to (issue 50's target 1). The lead-in's
    samples are recorded beside it. `timer`: an object with HotTimer's samples(n) and turn_sample_us (a
    stand-in for the tests); by default copy_timer's."""
    import statistics

    timer = timer or copy_timer()
    lead = timer.samples(max(1, math.ceil(lead_in_us / max(timer.turn_sample_us, 1.0)))) if lead_in_us > 0 else []
    us = statistics.median(timer.samples(samples))
    gbps = lambda t_us: 2 * COPY_BYTES / (t_us * 1e3)  # noqa: E731
    out = {"bytes": 2 * COPY_BYTES, "median_us": us, "gbps": gbps(us), "samples": samples}
    if lead:
        out["lead_in"] = {"samples": len(lead), "median_gbps": gbps(statistics.median(lead)),
                          "slowest_gbps": gbps(max(lead)), "fastest_gbps": gbps(min(lead))}
    return out
