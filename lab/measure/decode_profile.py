"""Nsight Compute over one call of each decode step and decode peer at a decode shape (issue 50: the profiler's
DRAM throughput per step), in one ncu process for every shape a run profiles, as lab.measure.profile batches the
prefill peers (the set's two shapes took 49.4 s in a process each and 28.2 s in one, on an H200: each target process
starts torch, the steps and the peers afresh under ncu; data/explorations/2026-12-06-decode-set-time).

A decode call is one kernel or two (a split call's merge) and a peer's may hold helpers, so the target ends
each call with lab.measure.profile's separator kernel and the capture is cut there
(lab.measure.profile.split_at_separators). Where ncu exits with an error or the capture does not map, each shape
takes a process of its own, and where that fails too each implementation is profiled alone, which records its
reason (not after a timeout: each would take as long). A
call's record (`call_record`) sums its kernels: their time, their DRAM bytes, and their DRAM throughput weighted
by duration (the share of the DRAM's peak the call kept busy over its kernels' time; launch gaps are not in it).
Caches are flushed between replay passes (ncu's default), so the numbers are a cold call's; clocks are left alone.

Host side (needs ncu and a GPU; never raises where profiling is impossible):

    >>> records = profile_decode(["chunks_one_cta_an_sm", "sdpa_cudnn"], "8,32,8,128,8192,bf16", Path("out"))
    >>> records = profile_decode_shapes([("8,32,8,128,8192,bf16", ["chunks_one_cta_an_sm", "sdpa_cudnn"]),
    ...                                  ("1,32,8,128,131072,bf16", ["chunks_one_cta_an_sm"])], Path("out"))

Target side (inside ncu): python -m lab.measure.decode_profile --shape SPEC --target NAME[,NAME...] [--shape ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

from lab.cli import OneLineParser
from lab.measure.ncu_metrics import METRICS, main_kernel, plain_number
from lab.measure.ncu_process import find_ncu, run_in_group
from lab.measure.profile import PROFILE_RANGE, run_capture, split_at_separators

# The few metrics a decode call's record needs (fewer replay passes than the prefill profile's list).
DECODE_METRICS = {k: METRICS[k] for k in ("duration", "dram_throughput_pct", "dram_bytes", "grid_size", "block_size",
                                          "registers")}
DEFAULT_TIMEOUT_S = 180.0
INPUT_SEED = 4242  # the target's inputs (lab.kernels.decode.DecodeShape.random_inputs)


def call_record(kernels: list[dict]) -> dict:
    """One call's numbers from its kernels (lab.measure.ncu_metrics.parse_ncu_csv's dicts): how many, their
    summed time (us) and DRAM bytes, their DRAM throughput (% of peak) weighted by duration, and the longest
    kernel's name, throughput and grid. None where a kernel lacks the value."""
    durations = [plain_number(k.get("duration")) for k in kernels]
    pcts = [plain_number(k.get("dram_throughput_pct")) for k in kernels]
    nbytes = [plain_number(k.get("dram_bytes")) for k in kernels]
    timed = bool(kernels) and None not in durations
    total = sum(durations) if timed else None
    weighted = (sum(d * p for d, p in zip(durations, pcts)) / total
                if timed and None not in pcts and total > 0 else None)
    main = main_kernel(kernels) or {}
    return {"n_kernels": len(kernels), "duration_us": total,
            "dram_bytes": sum(nbytes) if kernels and None not in nbytes else None,
            "dram_throughput_pct": weighted, "main_kernel": str(main.get("kernel", ""))[:120] or None,
            "main_dram_throughput_pct": plain_number(main.get("dram_throughput_pct")),
            "main_grid_size": plain_number(main.get("grid_size"))}


def ncu_command(ncu: str, calls: list[tuple[str, list[str]]]) -> list[str]:
    """ncu over the target's calls: (decode shape, the names profiled at it), in order."""
    target = [arg for spec, names in calls for arg in ("--shape", spec, "--target", ",".join(names))]
    return [ncu, "--clock-control", "none", "--print-units", "base", "--nvtx", "--nvtx-include", f"{PROFILE_RANGE}/",
            "--csv", "--page", "raw", "--metrics", ",".join(DECODE_METRICS.values()),
            sys.executable, "-m", "lab.measure.decode_profile", *target]


def _failed(name: str, spec: str, reason: str, csv_path: str = "") -> dict:
    return {"impl": name, "shape": spec, "ok": False, "reason": reason, "csv_path": csv_path}


def _profiled(name: str, spec: str, csv_path: str, kernels: list[dict]) -> dict:
    return {"impl": name, "shape": spec, "ok": True, "reason": "", "csv_path": csv_path, **call_record(kernels)}


def _one_process(calls: list[tuple[str, list[str]]], out_dir: Path, stem: str, timeout: float, gpu: str | None,
                 runner) -> tuple[list[list[dict]] | None, str, str]:
    """One ncu process over `calls` ((shape, names), in order): (each call's kernels, shape by shape, or None; why
    not; the CSV's path)."""
    kernels, why, csv_path = run_capture(ncu_command(find_ncu(), calls), out_dir, stem, timeout, gpu, runner)
    if kernels is None:
        return None, why, csv_path
    parts = split_at_separators(kernels)
    n = sum(len(names) for _, names in calls)
    if parts is None or len(parts) != n or not all(parts):
        found = "no" if parts is None else len(parts)
        return None, f"the capture did not map to the calls ({found} parts for {n})", csv_path
    return parts, "", csv_path


def _stem(spec: str) -> str:
    return "ncu_decode_" + spec.replace(",", "_")


def profile_decode(names: list[str], spec: str, out_dir, timeout: float = DEFAULT_TIMEOUT_S, gpu: str | None = None,
                   runner=run_in_group) -> list[dict]:
    """A record a name (decode steps and decode peers, sdpa_<backend> and flex_attention) at the decode shape
    `spec`: ok with call_record's numbers, or not with the reason. One ncu process for all of them; where it exits
    with an error or its capture does not map, one a name (where it times out or cannot start, none: every name
    has that reason). `runner(cmd, timeout, gpu) -> (rc, stdout, stderr)`: lab.measure.ncu_process.run_in_group, or a
    stand-in in the tests. Never raises."""
    if not names:
        return []
    if find_ncu() is None:
        return [_failed(n, spec, "ncu (Nsight Compute) not found on PATH or under CUDA_HOME/bin") for n in names]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = _stem(spec)
    parts, why, csv_path = _one_process([(spec, names)], out_dir, stem, timeout, gpu, runner)
    if parts is not None:
        return [_profiled(n, spec, csv_path, ks) for n, ks in zip(names, parts)]
    if _gave_up(why):  # one a name would only take longer
        return [_failed(n, spec, why, csv_path) for n in names]
    records = []
    for name in names:
        one, why, path = _one_process([(spec, [name])], out_dir, f"{stem}_{name}", timeout, gpu, runner)
        records.append(_profiled(name, spec, path, one[0]) if one is not None else _failed(name, spec, why, path))
    return records


def _gave_up(why: str) -> bool:
    return why.startswith(("ncu timed out", "ncu could not be started"))


def profile_decode_shapes(calls: list[tuple[str, list[str]]], out_dir, timeout: float = DEFAULT_TIMEOUT_S,
                          gpu: str | None = None, runner=run_in_group) -> list[dict]:
    """profile_decode over several shapes ((decode shape, names) in order, a shape's names as profile_decode's) in
    one ncu process, its timeout `timeout` a shape: the records in the same order. Where that process exits with an
    error or its capture does not map, profile_decode a shape (and so a name where that fails too); where it times
    out or cannot start, every call has that reason. Never raises."""
    calls = [(spec, list(names)) for spec, names in calls if names]
    if len(calls) <= 1:
        return profile_decode(calls[0][1], calls[0][0], out_dir, timeout, gpu, runner) if calls else []
    if find_ncu() is None:
        return [r for spec, names in calls for r in profile_decode(names, spec, out_dir, timeout, gpu, runner)]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    parts, why, csv_path = _one_process(calls, out_dir, "ncu_decode_shapes", timeout * len(calls), gpu, runner)
    if parts is not None:
        cut = iter(parts)
        return [_profiled(n, spec, csv_path, next(cut)) for spec, names in calls for n in names]
    if _gave_up(why):
        return [_failed(n, spec, why, csv_path) for spec, names in calls for n in names]
    return [r for spec, names in calls for r in profile_decode(names, spec, out_dir, timeout, gpu, runner)]


# ---------------------------------------------------------------------------------------------
# Target side (runs inside ncu)
# ---------------------------------------------------------------------------------------------

def target(calls: list[tuple[str, list[str]]]) -> None:
    """Shape by shape, one profiled call of each of its names on the same inputs, each followed by a separator
    kernel; a shape's inputs are freed before the next shape's are drawn."""
    import torch

    from lab.kernels import variants
    from lab.kernels.decode import DecodeShape
    from lab.kernels.manifest import names as step_names
    from lab.measure.decode_peers import decode_peer
    from lab.measure.profile import launch_once, separator

    steps = set(step_names(problem=None))
    for spec, names in calls:
        x = DecodeShape.parse(spec).random_inputs(seed=INPUT_SEED)
        args = (x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"])
        for name in names:
            if name not in steps:  # a peer (sdpa_<backend>, flex_attention)
                peer = decode_peer(name)
                with peer.context():
                    launch_once(peer.bind(*args))
            else:
                fn = variants.load(name)
                need = fn.workspace_bytes(x["q"], x["k_cache"], x["block_table"])
                ws = torch.empty(need, dtype=torch.uint8, device="cuda") if need else None
                launch_once(lambda fn=fn, ws=ws: fn.launch(*args, x["out"], workspace=ws))
            separator()
        del x, args
        torch.cuda.empty_cache()


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m lab.measure.decode_profile", description=__doc__.splitlines()[0])
    p.add_argument("--shape", action="append", required=True, help="a decode shape, B,H,H_kv,D,cache_len[,qN]"
                   "[,mixed][,pageN][,bf16] (lab.kernels.decode.DecodeShape); repeat it with a --target each")
    p.add_argument("--target", metavar="NAMES", action="append", required=True, help="(inside ncu) one profiled "
                   "call of each of these comma-separated decode steps and peers (sdpa_<backend>, flex_attention) "
                   "at the --shape before it")
    args = p.parse_args(argv)
    if len(args.shape) != len(args.target):
        p.error(f"{len(args.shape)} --shape and {len(args.target)} --target: give one --target a --shape")
    target([(spec, names.split(",")) for spec, names in zip(args.shape, args.target)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
