"""Nsight Compute over one launch of each implementation per shape, and its CSV parsed.

Host side (needs ncu and a GPU; never raises where profiling is impossible):

    >>> from lab.measure import profile
    >>> r = profile.profile_impl("wmma", (4, 16, 4096, 64), causal=False, out_dir=Path("data/prof"))
    >>> r.ok, r.reason, r.main["duration"], r.main["top_stalls"]
    >>> r.to_record()                       # one flat dict, a pandas row

It runs, in the repository root,

    ncu --clock-control none --print-units base --nvtx --nvtx-include profile/ --csv --page raw \
        --metrics <METRICS> python -m lab.measure.profile --target IMPL --shape B,H,S,D [--causal]

Target side (inside ncu): builds nothing new for a variant that profile_impl has built, makes the
shape's inputs (fp16, or bf16 where the shape says so; K/V with its K/V heads: `--shape` takes
lab.kernels.shape's words, e.g. `4,32,2048,128,kv8,bf16`), runs two warm-up launches, then exactly one launch inside the NVTX push/pop range
`profile`, which is all that ncu profiles. IMPL is a variant name or a peer's (lab.measure.peers).

Clocks are left alone (`--clock-control none`, never `base`): ncu's default locks the SM clock to
base, which would make its durations disagree with lab.measure.timing's. Caches are flushed between
replay passes (ncu's default `--cache-control all`), so `duration` is a cold-cache time.

Roofline helpers: `achieved_tflops`, `arithmetic_intensity`, `attainable_tflops`, and
`measure_ceilings()` (the GPU's fp16 tensor-core matmul rate and device-memory copy bandwidth,
measured on the GPU in hand).
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from lab.cli import OneLineParser
from lab.kernels.shape import DTYPES, Shape, dtype_name
from lab.measure.stats import attention_flops, tflops

PROFILE_RANGE = "profile"
DEFAULT_TIMEOUT_S = 300.0

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
    "tensor_pipe_active": "tensor_pipe_active",
    "dram_throughput": "dram_throughput_pct",
    "achieved_occupancy": "achieved_occupancy",
}

DERIVED = ("bank_conflicts", "bank_conflict_pct", "global_sectors_per_request", "local_bytes", "ctas_per_sm",
           "top_stalls")
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


def _num(x):
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _ratio(a, b, times: float = 1.0, zero_over_zero: float | None = 0.0):
    a, b = _num(a), _num(b)
    if a is None or b is None:
        return None
    if b == 0:
        return zero_over_zero if a == 0 else None
    return a / b * times


def _sum(*xs):
    xs = [_num(x) for x in xs]
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
            v = time_to_us(_num(v), unit)
        elif _num(v) is not None:
            v = v * unit_scale(unit)
        k[name] = v
    k["duration_us"] = k["duration"]
    k["bank_conflicts"] = _sum(k["bank_conflicts_ld"], k["bank_conflicts_st"])
    k["bank_conflict_pct"] = _ratio(k["bank_conflicts"], k["shared_wavefronts"], 100.0)
    # No global load instructions at all (every load by TMA) leaves the ratio undefined, not 0.
    k["global_sectors_per_request"] = _ratio(k["global_load_sectors"], k["global_load_requests"], zero_over_zero=None)
    k["local_bytes"] = _sum(k["local_bytes_ld"], k["local_bytes_st"])
    limits = [_num(k[n]) for n in OCCUPANCY_LIMITS if _num(k[n]) is not None]
    k["ctas_per_sm"] = min(limits) if limits else None
    stalls = [(r, _num(k[f"stall_{r}"])) for r in STALL_REASONS if r not in NOT_STALLS]
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
    timed = [k for k in kernels if _num(k.get("duration")) is not None]
    if not timed:
        return kernels[0]
    return max(timed, key=lambda k: k["duration"])


# ---------------------------------------------------------------------------------------------
# Roofline (the FLOP count is lab.measure.stats.attention_flops, the timing's own)
# ---------------------------------------------------------------------------------------------


def achieved_tflops(B: int, H: int, S: int, D: int, causal: bool, duration_us: float | None) -> float | None:
    if _num(duration_us) is None or duration_us <= 0:
        return None
    return tflops(B, H, S, D, causal, duration_us)


def arithmetic_intensity(flops: float | None, dram_bytes: float | None) -> float | None:
    """FLOPs per DRAM byte (None where no bytes were measured)."""
    if _num(flops) is None or _num(dram_bytes) is None or dram_bytes <= 0:
        return None
    return flops / dram_bytes


def attainable_tflops(intensity: float | None, ceilings: dict) -> float | None:
    """The roofline: min(matrix peak, intensity x memory bandwidth), in TFLOP/s."""
    if _num(intensity) is None:
        return None
    return min(ceilings["tensor_tflops"], intensity * ceilings["dram_gbps"] * 1e9 / 1e12)


def measure_ceilings(matmul_n: int = 8192, copy_bytes: int = 1 << 30, reps: int = 20) -> dict:
    """The GPU in hand's fp16 tensor-core matmul rate and device-memory bandwidth (GPU only, ~2 s).

    tensor_tflops: torch.matmul of two N x N fp16 matrices, 2*N^3 FLOPs a launch.
    dram_gbps: a device-to-device copy of copy_bytes, counting bytes read plus written (1e9 B/s).
    Each is the best of `reps` launches timed one by one with CUDA events after warm-up, clocks
    left as they are (as in the timings they are compared with).
    """
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("measure_ceilings needs a CUDA GPU")

    def best_ms(fn) -> float:
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
        for start, end in events:
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return min(s.elapsed_time(e) for s, e in events)

    a = torch.randn(matmul_n, matmul_n, device="cuda", dtype=torch.float16)
    b = torch.randn(matmul_n, matmul_n, device="cuda", dtype=torch.float16)
    c = torch.empty_like(a)
    mm_ms = best_ms(lambda: torch.matmul(a, b, out=c))
    del a, b, c
    src = torch.empty(copy_bytes, device="cuda", dtype=torch.uint8).fill_(1)
    dst = torch.empty_like(src)
    cp_ms = best_ms(lambda: dst.copy_(src))
    del src, dst
    torch.cuda.empty_cache()
    tensor_tflops = 2.0 * matmul_n**3 / (mm_ms * 1e-3) / 1e12
    dram_gbps = 2.0 * copy_bytes / (cp_ms * 1e-3) / 1e9
    return {
        "device": torch.cuda.get_device_name(),
        "tensor_tflops": tensor_tflops,
        "dram_gbps": dram_gbps,
        "ridge_flop_per_byte": tensor_tflops * 1e12 / (dram_gbps * 1e9),
        "matmul_n": matmul_n,
        "matmul_us": mm_ms * 1e3,
        "copy_bytes": copy_bytes,
        "copy_us": cp_ms * 1e3,
    }


# ---------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------

RECORD_METRICS = tuple(METRICS) + tuple(OPTIONAL_METRICS) + ("duration_us",) + DERIVED + HYPOTHESIS_ALIASES


def _inputs(shape, causal: bool) -> Shape:
    """The problem profiled: a Shape (its K/V heads and dtype kept, `causal` as given) or a
    (B, H, S, D) tuple (fp16, as many K/V heads as query heads)."""
    if isinstance(shape, Shape):
        return Shape(*shape.dims, bool(causal), shape.H_kv, shape.dtype)
    return Shape(*(int(x) for x in shape), bool(causal))


@dataclass
class ProfileResult:
    impl: str
    shape: tuple[int, int, int, int]  # (B, H, S, D)
    causal: bool
    ok: bool
    reason: str = ""
    csv_path: str = ""
    kernels: list[dict] = field(default_factory=list)
    main: dict | None = None
    H_kv: int | None = None  # K/V heads (None: H)
    dtype: str = "fp16"

    def to_record(self) -> dict:
        """A flat dict (one pandas row): identity, outcome and the main kernel's metrics."""
        B, H, S, D = self.shape
        rec = {"impl": self.impl, "B": B, "H": H, "S": S, "D": D, "causal": bool(self.causal),
               "H_kv": H if self.H_kv is None else self.H_kv, "dtype": DTYPES[dtype_name(self.dtype)], "ok": self.ok,
               "reason": self.reason, "csv_path": self.csv_path, "n_kernels": len(self.kernels),
               "kernel": self.main.get("kernel") if self.main else None}
        m = self.main or {}
        for key in RECORD_METRICS:
            v = m.get(key)
            if key == "top_stalls":
                v = ";".join(f"{r}:{val:.4g}" for r, val in v) if v else ""
            rec[key] = v
        flops = attention_flops(B, H, S, D, self.causal)
        rec["achieved_tflops"] = achieved_tflops(B, H, S, D, self.causal, m.get("duration"))
        rec["arithmetic_intensity"] = arithmetic_intensity(flops, m.get("dram_bytes"))
        return rec


def _result(impl: str, s: Shape, **kw) -> ProfileResult:
    return ProfileResult(impl=impl, shape=s.dims, causal=s.causal, H_kv=s.H_kv, dtype=s.dtype, **kw)


def shape_id(shape, causal: bool) -> str:
    """'B4_H16_S4096_D64_full' ('_kv8_bf16' where they apply): the stem of a profile's files."""
    s = _inputs(shape, causal)
    return "_".join([f"B{s.B}_H{s.H}_S{s.S}_D{s.D}_{'causal' if s.causal else 'full'}", *s.input_words])


def find_ncu() -> str | None:
    """ncu on PATH, else <cuda_home>/bin/ncu, else None."""
    found = shutil.which("ncu")
    if found:
        return found
    from lab.kernels.build import cuda_home

    home = cuda_home()
    if home:
        cand = Path(home, "bin", "ncu")
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return None


def ncu_command(ncu: str, impl: str, shape, causal: bool, metrics: dict[str, str] | None = None) -> list[str]:
    s = _inputs(shape, causal)
    metric_names = ",".join(dict.fromkeys((metrics or METRICS).values()))
    cmd = [ncu, "--clock-control", "none", "--print-units", "base", "--nvtx", "--nvtx-include", f"{PROFILE_RANGE}/",
           "--csv", "--page", "raw", "--metrics", metric_names,
           sys.executable, "-m", "lab.measure.profile", "--target", impl, "--shape",
           ",".join([f"{s.B},{s.H},{s.S},{s.D}", *s.input_words])]
    if causal:
        cmd.append("--causal")
    return cmd


def _first_line(text: str, needle: str) -> str | None:
    return next((ln.strip() for ln in text.splitlines() if needle in ln), None)


def _failure_reason(returncode: int, out: str, err: str) -> str | None:
    both = out + "\n" + err
    if "ERR_NVGPUCTRPERM" in both:
        return ("no permission to read GPU performance counters (ERR_NVGPUCTRPERM): run as root or set "
                "NVreg_RestrictProfilingToAdminUsers=0")
    if returncode != 0:
        details = []
        ncu_error = _first_line(both, "==ERROR==")
        if ncu_error:
            details.append(ncu_error)
        # the target's own last words (a Python exception's message), where it printed any
        tail = [ln.strip() for ln in err.splitlines() if ln.strip() and not ln.lstrip().startswith("==")]
        if tail:
            details.append(tail[-1])
        detail = " | ".join(details)
        return f"ncu exited with code {returncode}" + (f": {detail[:400]}" if detail else "")
    return None


def _run(cmd: list[str], timeout: float) -> tuple[int, str, str]:
    """Run cmd in its own process group (ncu's target included), killed whole on timeout."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=_repo(),
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
        proc.communicate()
        raise
    return proc.returncode, out, err


def _repo() -> Path:
    from lab.kernels.variants import REPO

    return REPO


def _prebuild(impl: str) -> str | None:
    """Build a variant here (not under ncu); None if fine or not a variant, else why not."""
    from lab.kernels import switches
    from lab.measure import peers

    if peers.is_peer(impl):
        return None
    try:
        switches.impl_config(impl)  # a variant or a knock-out configuration of one
    except (KeyError, ValueError) as exc:
        return f"unknown implementation {impl!r}: {str(exc).strip()[:300]}"
    try:
        result = switches.build_impl(impl)
    except Exception as exc:  # noqa: BLE001 - recorded as the reason, never raised
        return f"build failed: {type(exc).__name__}: {str(exc).strip()[:300]}"
    if not result.ok:
        return f"build failed: {result.log.strip()[:300]}"
    return None


def profile_impl(impl: str, shape, causal: bool, out_dir, timeout: float = DEFAULT_TIMEOUT_S,
                 prebuild: bool = True) -> ProfileResult:
    """ncu over one launch of impl on shape; returns ok=False with a reason where it cannot.

    Never raises for a missing ncu, a refusal (no counter permission, non-zero exit), a timeout,
    a failed build or an empty capture. The raw CSV goes to out_dir/ncu_<impl>_<shapeid>.csv and
    ncu's stderr next to it (.log).
    """
    shape = _inputs(shape, causal)
    result = _result(impl, shape, ok=False)
    ncu = find_ncu()
    if ncu is None:
        result.reason = "ncu (Nsight Compute) not found on PATH or under CUDA_HOME/bin"
        return result
    if prebuild:
        why = _prebuild(impl)
        if why:
            result.reason = why
            return result
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"ncu_{impl}_{shape_id(shape, causal)}"
    csv_path = out_dir / f"{stem}.csv"
    cmd = ncu_command(ncu, impl, shape, causal)
    try:
        rc, out, err = _run(cmd, timeout)
    except subprocess.TimeoutExpired:
        result.reason = f"ncu timed out after {timeout:g} s"
        return result
    except OSError as exc:
        result.reason = f"ncu could not be started: {exc}"
        return result
    csv_path.write_text(out)
    (out_dir / f"{stem}.log").write_text(" ".join(cmd) + "\n" + err)
    result.csv_path = str(csv_path)
    why = _failure_reason(rc, out, err)
    if why:
        result.reason = why
        return result
    result.kernels = parse_ncu_csv(out)
    if not result.kernels:
        both = out + "\n" + err
        warnings = [ln.strip() for ln in both.splitlines() if "==WARNING==" in ln and "GPU clocks" not in ln]
        detail = _first_line(both, "==ERROR==") or (warnings[0] if warnings else None)
        result.reason = f"ncu captured no kernel in the NVTX range '{PROFILE_RANGE}'" + (f" ({detail})" if detail else "")
        return result
    result.main = main_kernel(result.kernels)
    result.ok = True
    return result


VARIANT_KERNEL = "attention_fwd"  # every variant's kernel is named so (one launch per call)


def profile_variants(names: list[str], shape, causal: bool, out_dir, timeout: float = DEFAULT_TIMEOUT_S
                     ) -> list[ProfileResult] | None:
    """One ncu process over one launch of each variant in `names`, in order: most of a profile's
    time is process start-up (Python, torch, CUDA context, ncu), not the 7 replay passes.

    A variant's call launches exactly one kernel, so the captured kernels map to the variants in
    launch order; the capture is accepted only when it has one kernel per variant, each named
    VARIANT_KERNEL. Returns None otherwise (or when ncu fails as a whole), and the caller profiles
    the variants one by one (profile_impl), which records the reasons. A variant that does not
    build gets its own failed result here and is left out of the batch.
    """
    shape = _inputs(shape, causal)
    ncu = find_ncu()
    if ncu is None or not names:
        return None
    results, batch = {}, []
    for name in names:
        why = _prebuild(name)
        if why:
            results[name] = _result(name, shape, ok=False, reason=why)
        else:
            batch.append(name)
    if batch:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        stem = f"ncu_variants_{shape_id(shape, causal)}"
        csv_path = out_dir / f"{stem}.csv"
        cmd = ncu_command(ncu, ",".join(batch), shape, causal)
        try:
            rc, out, err = _run(cmd, timeout)
        except (subprocess.TimeoutExpired, OSError):
            return None
        csv_path.write_text(out)
        (out_dir / f"{stem}.log").write_text(" ".join(cmd) + "\n" + err)
        if _failure_reason(rc, out, err):
            return None
        kernels = parse_ncu_csv(out)
        if len(kernels) != len(batch) or not all(VARIANT_KERNEL in str(k.get("kernel", "")) for k in kernels):
            return None
        for name, k in zip(batch, kernels):
            results[name] = _result(name, shape, ok=True, csv_path=str(csv_path), kernels=[k], main=k)
    return [results[n] for n in names]


def profile_all(impls, shapes, out_dir, causal_flags=(False,), progress=print, **kwargs) -> list[ProfileResult]:
    """profile_impl over every (impl, shape, causal); a skipped one never stops the rest."""
    results = []
    for shape in shapes:
        for causal in causal_flags:
            for impl in impls:
                try:
                    r = profile_impl(impl, shape, causal, out_dir, **kwargs)
                except Exception as exc:  # noqa: BLE001 - profiling must never stop a run
                    r = _result(impl, _inputs(shape, causal), ok=False,
                                reason=f"profiling raised {type(exc).__name__}: {exc}")
                results.append(r)
                if progress:
                    m = r.main or {}
                    progress(f"  {impl:<18} {shape_id(shape, causal):<28} "
                             + (f"{m.get('duration'):.1f} us, {r.to_record()['top_stalls']}" if r.ok and
                                _num(m.get("duration")) is not None else f"skipped: {r.reason}"))
    return results


# ---------------------------------------------------------------------------------------------
# Target side (runs inside ncu)
# ---------------------------------------------------------------------------------------------

def target(impl: str, shape, causal: bool) -> None:
    """One profiled launch of impl; impl may be a comma-separated list of variants (one launch
    each, in that order, on the same inputs: see profile_variants)."""
    import torch

    shape = _inputs(shape, causal)
    q, k, v = shape.random_inputs()
    if "," in impl:
        from lab.kernels import switches, variants

        names = impl.split(",")
        unknown = [n for n in names if not switches.is_impl(n)]
        if unknown:
            raise SystemExit(f"only variants can be profiled together; not variants: {', '.join(unknown)}")
        variants.check_inputs(q, k, v)
        out = torch.empty_like(q)
        for name in names:
            attn = switches.build_impl(name).load()
            _refuse_not_taken(attn, shape)
            _launch_once(lambda attn=attn: attn.launch(q, k, v, out, causal, None))
        return
    from lab.measure import peers

    if peers.is_peer(impl):
        try:
            peer = peers.get(impl)
        except ValueError as exc:
            raise SystemExit(str(exc)) from None
        if impl == peers.FLEX:
            # ncu follows child processes: compile in this one (from the inductor cache the
            # timing stage filled) rather than in a pool of compile workers
            import torch._inductor.config as inductor_config

            inductor_config.compile_threads = 1
        with peer.context():
            # the warm-up launches compile where the peer compiles (flex_attention), outside the range
            _launch_once(peer.bind(q, k, v, causal, None))
    else:
        from lab.kernels import switches, variants

        if not switches.is_impl(impl):
            raise SystemExit(f"unknown implementation {impl!r}; known: {', '.join(variants.names())}, "
                             f"their knock-outs <variant>~no_<switch>, {', '.join(peers.known_names())}")
        attn = switches.build_impl(impl).load()
        variants.check_inputs(q, k, v)
        _refuse_not_taken(attn, shape)
        out = torch.empty_like(q)
        _launch_once(lambda: attn.launch(q, k, v, out, causal, None))


def _refuse_not_taken(attn, shape: Shape) -> None:
    """A variant asked for inputs it does not take exits with why (the profile stage leaves such a
    variant out beforehand; this keeps a direct `--target` call from launching it on them)."""
    if why := attn.not_taken(shape):
        raise SystemExit(why)


def _launch_once(launch) -> None:
    import torch

    for _ in range(2):
        launch()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(PROFILE_RANGE)
    launch()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m lab.measure.profile", description=__doc__.splitlines()[0])
    p.add_argument("--target", metavar="IMPL", help="(inside ncu) run one profiled launch of IMPL")
    p.add_argument("--impls", help="host side: comma-separated variants and peers (sdpa_<backend>, "
                   "flex_attention, ...)")
    p.add_argument("--shape", type=Shape.parse, default=Shape(4, 16, 4096, 64, False),
                   help="B,H,S,D[,causal][,kvN][,fp16|bf16] (lab.kernels.shape)")
    p.add_argument("--causal", action="store_true", help="causal (as ',causal' in --shape)")
    p.add_argument("--out", default="data/profile", help="host side: folder for CSVs and records.json")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S)
    p.add_argument("--ceilings", action="store_true", help="measure and print the GPU's roofline ceilings")
    args = p.parse_args(argv)
    dims, causal = args.shape, args.causal or args.shape.causal
    if args.target:
        target(args.target, dims, causal)
        return 0
    if args.ceilings:
        print(json.dumps(measure_ceilings(), indent=1))
    if args.impls:
        results = profile_all(args.impls.split(","), [dims], args.out, causal_flags=(causal,), timeout=args.timeout)
        path = Path(args.out) / f"records_{shape_id(dims, causal)}.json"
        path.write_text(json.dumps([r.to_record() for r in results], indent=1, default=str))
        print(f"records: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
