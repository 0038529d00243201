"""Nsight Compute's side of the profile: the metrics the study asks ncu for (and which of them judges a step's
hypothesis), and `ncu --csv --page raw` parsed into one dict a kernel, in the study's units (durations in
microseconds, bytes, percentages). No GPU and no ncu needed: lab.measure.profile runs ncu and hands its
output here."""

from __future__ import annotations

import csv
import math

STALL_REASONS = (
    "barrier",
    "long_scoreboard",
    "short_scoreboard",
    "mio_throttle",
    "math_pipe_throttle",
    "wait",
    "not_selected",
    "lg_throttle",
    "membar",
    "dispatch_stall",
    "no_instruction",
    "tex_throttle",
    "drain",
    "sleeping",
    "branch_resolving",
    "selected",
)
# "selected" is the cycle a warp spends being issued (about 1 per issue), not a stall: it is
# recorded as stall_selected but left out of top_stalls.
NOT_STALLS = ("selected",)

# Friendly name -> Nsight Compute metric. Every name here was accepted, and gave a value, in a run
# of Nsight Compute 2025.3.1 (CUDA 13.0) on an H200 (sm_90) with this very list; ncu refuses the
# whole run if any one of them is unknown to the GPU in hand, and profile_impl then says so in its
# reason. The docs search could not reach the Profiling Guide's metric tables themselves.
#   ctas_per_sm is not one metric: it is the min of the launch__occupancy_limit_* values (CTAs per
#   SM allowed by registers, shared memory, warps, the per-SM block limit and, where ncu prints it,
#   named barriers), which is what the Occupancy section's "Theoretical Active Warps" comes from.
#   tensor_pipe_active is the HMMA tensor pipe (mma.sync / wmma). On the H200 it also read 57 % for
#   cuDNN's wgmma kernel, so it seems to count wgmma too (seen once, not found in the docs).
METRICS: dict[str, str] = {
    "duration": "gpu__time_duration.sum",
    "dram_throughput_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_bytes_per_s": "dram__bytes.sum.per_second",
    "dram_bytes": "dram__bytes.sum",
    "achieved_occupancy": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical_occupancy": "sm__maximum_warps_per_active_cycle_pct",
    "registers": "launch__registers_per_thread",
    "smem_dynamic": "launch__shared_mem_per_block_dynamic",
    "smem_static": "launch__shared_mem_per_block_static",
    "grid_size": "launch__grid_size",
    "block_size": "launch__block_size",
    "waves": "launch__waves_per_multiprocessor",
    "sm_count": "launch__sm_count",
    "occupancy_limit_registers": "launch__occupancy_limit_registers",
    "occupancy_limit_shared_mem": "launch__occupancy_limit_shared_mem",
    "occupancy_limit_warps": "launch__occupancy_limit_warps",
    "occupancy_limit_blocks": "launch__occupancy_limit_blocks",
    "bank_conflicts_ld": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "bank_conflicts_st": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "shared_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "tensor_pipe_active": "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    # The SMs' active cycles, mean and busiest: how much of the launch the average SM works (a persistent
    # launch's tail; accepted on the H200 with ncu 2025.3.1, data/explorations/2026-11-29-q-double-buffer).
    "sm_cycles_active_avg": "sm__cycles_active.avg",
    "sm_cycles_active_max": "sm__cycles_active.max",
    "local_bytes_ld": "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
    "local_bytes_st": "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
    "global_load_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "global_load_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    **{f"stall_{r}": f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALL_REASONS},
}

# Read where the raw page has them (ncu 2025.3 prints every launch__ metric whatever --metrics
# asks for) but never asked for: an older ncu that lacks one would refuse the whole run.
OPTIONAL_METRICS: dict[str, str] = {
    "occupancy_limit_barriers": "launch__occupancy_limit_barriers",
    "registers_allocated": "launch__registers_per_thread_allocated",
    "smem_per_block": "launch__shared_mem_per_block",
    "smem_driver": "launch__shared_mem_per_block_driver",
    "theoretical_warps_per_sm": "sm__maximum_warps_avg_per_active_cycle",
    "replay_passes": "profiler__replayer_passes",
}

OCCUPANCY_LIMITS = ("occupancy_limit_registers", "occupancy_limit_shared_mem", "occupancy_limit_warps",
                    "occupancy_limit_blocks", "occupancy_limit_barriers")

# lab.kernels.manifest.METRICS (what a hypothesis in the manifest names) -> the key of a parsed kernel.
HYPOTHESIS_METRICS = {
    "global_load_sectors_per_request": "global_sectors_per_request",
    "shared_bank_conflicts": "bank_conflicts",
    "stall_barrier": "stall_barrier",
    "stall_long_scoreboard": "stall_long_scoreboard",
    "stall_wait": "stall_wait",
    "stall_mio_throttle": "stall_mio_throttle",
    "tensor_pipe_active": "tensor_pipe_active",
    "dram_throughput": "dram_throughput_pct",
    "achieved_occupancy": "achieved_occupancy",
    "sm_active_balance": "sm_active_balance",
}

DERIVED = ("bank_conflicts", "bank_conflict_pct", "global_sectors_per_request", "local_bytes", "ctas_per_sm",
           "sm_active_balance", "top_stalls")
HYPOTHESIS_ALIASES = tuple(k for k, v in HYPOTHESIS_METRICS.items() if k != v)


# ---------------------------------------------------------------------------------------------
# Units and numbers
# ---------------------------------------------------------------------------------------------

_TIME_S = {"nsecond": 1e-9, "ns": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3,
           "second": 1.0, "s": 1.0, "sec": 1.0}
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "Ki": 1024.0, "Mi": 1024.0**2, "Gi": 1024.0**3, "Ti": 1024.0**4}


def _byte_scale(unit: str) -> float | None:
    """'byte' -> 1, 'Kbyte' -> 1e3, 'KiB'/'Kibyte' -> 1024, ... ; None if not a byte unit."""
    for base in ("byte", "B"):
        if unit.endswith(base):
            prefix = unit[: -len(base)]
            if base == "B" and prefix == "":
                return 1.0
            if prefix in _PREFIX:
                return _PREFIX[prefix]
    return None


def unit_scale(unit: str | None) -> float:
    """Factor taking a value in `unit` (as ncu prints it) to base units: bytes, bytes/second, seconds.

    Only byte and time units are rescaled ('Kbyte' -> bytes, 'Gbyte/second' -> bytes/second,
    'usecond' -> seconds, 'byte/block' -> bytes); anything else ('%', 'register/thread',
    'sector', 'block', ...) is left as it is.
    """
    if not unit:
        return 1.0
    unit = unit.strip()
    num, _, den = unit.partition("/")
    scale = 1.0
    if num in _TIME_S:
        scale = _TIME_S[num]
    else:
        b = _byte_scale(num)
        if b is not None:
            scale = b
    if den in _TIME_S:
        scale /= _TIME_S[den]
    return scale


def time_to_us(value: float | None, unit: str | None) -> float | None:
    """A duration in the unit ncu printed ('nsecond', 'usecond', 'msecond', 'second') in microseconds.

    ncu's own unit for gpu__time_duration is nanoseconds: an empty unit is taken as that.
    """
    if value is None or not isinstance(value, (int, float)):
        return None
    unit = (unit or "").strip()
    if unit not in _TIME_S:
        unit = "nsecond"
    if _TIME_S[unit] < 1e-6:
        return value / round(1e-6 / _TIME_S[unit])  # ns: divide, so 39,104 ns is 39.104 us exactly
    return value * round(_TIME_S[unit] / 1e-6)


def parse_value(text: str | None):
    """'1,234.5' -> 1234.5, '' / 'n/a' -> None, anything not a number stays a str."""
    if text is None:
        return None
    s = text.strip()
    if s == "" or s.lower() in ("n/a", "na", "nan", "-"):
        return None
    t = s.replace(",", "")
    try:
        v = float(t)
    except ValueError:
        return s
    return v if math.isfinite(v) else None


# ---------------------------------------------------------------------------------------------
# Parsing `ncu --csv --page raw`
# ---------------------------------------------------------------------------------------------

def _csv_fields(line: str) -> list[str] | None:
    if not line.startswith('"'):
        return None
    try:
        rows = list(csv.reader([line]))
    except csv.Error:
        return None
    return rows[0] if rows else None


def plain_number(x):
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _ratio(a, b, times: float = 1.0, zero_over_zero: float | None = 0.0):
    a, b = plain_number(a), plain_number(b)
    if a is None or b is None:
        return None
    if b == 0:
        return zero_over_zero if a == 0 else None
    return a / b * times


def _sum(*xs):
    xs = [plain_number(x) for x in xs]
    if all(x is None for x in xs):
        return None
    return sum(x for x in xs if x is not None)


def _kernel(header: list[str], units: list[str], fields: list[str]) -> dict:
    raw = dict(zip(header, fields))
    unit_of = dict(zip(header, units)) if units else {}
    k: dict = {
        "id": parse_value(raw.get("ID")),
        "kernel": raw.get("Kernel Name", ""),
        "block": raw.get("Block Size"),
        "grid": raw.get("Grid Size"),
        "device": raw.get("Device"),
        "cc": raw.get("CC"),
    }
    for name, metric in {**METRICS, **OPTIONAL_METRICS}.items():
        if metric not in raw:
            k[name] = None
            continue
        v = parse_value(raw[metric])
        unit = unit_of.get(metric, "")
        if name == "duration":
            v = time_to_us(plain_number(v), unit)
        elif plain_number(v) is not None:
            v = v * unit_scale(unit)
        k[name] = v
    k["duration_us"] = k["duration"]
    k["bank_conflicts"] = _sum(k["bank_conflicts_ld"], k["bank_conflicts_st"])
    k["bank_conflict_pct"] = _ratio(k["bank_conflicts"], k["shared_wavefronts"], 100.0)
    # No global load instructions at all (every load by TMA) leaves the ratio undefined, not 0.
    k["global_sectors_per_request"] = _ratio(k["global_load_sectors"], k["global_load_requests"], zero_over_zero=None)
    k["local_bytes"] = _sum(k["local_bytes_ld"], k["local_bytes_st"])
    # 1: every SM as busy as the busiest; a launch whose last round is part empty reads lower
    k["sm_active_balance"] = _ratio(k["sm_cycles_active_avg"], k["sm_cycles_active_max"], zero_over_zero=None)
    limits = [plain_number(k[n]) for n in OCCUPANCY_LIMITS if plain_number(k[n]) is not None]
    k["ctas_per_sm"] = min(limits) if limits else None
    stalls = [(r, plain_number(k[f"stall_{r}"])) for r in STALL_REASONS if r not in NOT_STALLS]
    stalls = [(r, v) for r, v in stalls if v is not None]
    k["top_stalls"] = sorted(stalls, key=lambda rv: rv[1], reverse=True)[:5]
    for alias, key in HYPOTHESIS_METRICS.items():
        if alias != key:
            k[alias] = k[key]
    return k


def parse_ncu_csv(text: str) -> list[dict]:
    """One dict per profiled kernel in `ncu --csv --page raw` output (noise lines are skipped).

    The header line starts with "ID"; the line after it, whose ID field is empty, holds units;
    each later CSV line of the header's width whose ID is a number is one kernel. `==PROF==`
    lines and the program's own output, before or among the CSV lines, are skipped.
    """
    kernels: list[dict] = []
    header: list[str] | None = None
    units: list[str] = []
    for line in text.splitlines():
        line = line.strip().lstrip("\ufeff")
        fields = _csv_fields(line)
        if fields is None:
            continue
        if fields and fields[0] == "ID":
            header, units = fields, []
            continue
        if header is None or len(fields) != len(header):
            continue
        ident = fields[0].strip()
        if ident == "" and not units:
            units = fields
            continue
        if isinstance(parse_value(ident), float):
            kernels.append(_kernel(header, units, fields))
    return kernels


def main_kernel(kernels: list[dict]) -> dict | None:
    """The longest-duration kernel (the first, where no duration was measured)."""
    if not kernels:
        return None
    timed = [k for k in kernels if plain_number(k.get("duration")) is not None]
    if not timed:
        return kernels[0]
    return max(timed, key=lambda k: k["duration"])
