"""Nsight Compute's time per launch of one implementation, each shape launched as the hot mode launches it:
a second clock on the run's hot medians, independent of CUDA events (issue 45: within 2 % wherever a launch
takes 100 us or more).

The hot mode (lab.measure.timing.HotTimer) times a graph of `reps` launches, about 1 ms, behind a sleep:
- reps > 1: ncu profiles CUDA graphs of back-to-back launches, each as one workload (`--graph-profiling
  graph`). A profiled graph's duration carries a cost of ncu's own, 100-300 us on an H100 and varying from
  graph to graph, so each shape gets graphs of reps x SIZES launches, each replayed REPLAYS times, and the
  time per launch is the Theil-Sen slope of duration against launches (scipy.stats.theilslopes, with its
  95 % interval), in which that cost cancels.
- reps = 1 (launches of 500 us and more): the hot sample is one launch after the sleep, so ncu profiles
  REPLAYS lone launches (their median; the quartiles beside it), each closed by the profile stage's
  separator kernel so that a launch of several kernels is summed.
`--clock-control none` (the harness's clocks) and `--cache-control none` (the hot mode flushes nothing).
Why so (data/explorations/2026-11-27-ncu-hot-block/, eight attempts on an H100): a lone launch of a shape
whose hot block holds many launches reads 3-9 us slower than its share of the block (ncu serializes it);
one graph's duration over its launches carries ncu's cost; graphs of 24 ms and more fall off the boost
clock; lone launches under `--graph-profiling graph` read 4-24 % slow. With these rules, FA3's hot medians
of run 20261127T232414Z and ncu on another H100 agreed within 2 % at 28 of 28 shapes (0.990-1.014;
data/checks/2026-11-28-ncu-xval-stage).

    >>> from lab.measure import ncu_xval
    >>> out = ncu_xval.crosscheck("flash_attn3", {shape: 2}, Path("data/runs/<id>/ncu"))
    >>> out["rows"][0]["per_launch_us"], out["rows"][0]["mode"]     # the report sets them against hot
"""

from __future__ import annotations

import gzip
import json
import statistics
import sys
from pathlib import Path

MIN_US = 100.0  # the shapes cross-checked: a hot median of at least this (the target's threshold)
REPLAYS = 6  # replays of each graph, or lone launches of a shape (8 took the profile 57 s at 28 shapes)
SIZES = (1, 2, 4, 8)  # a shape's graphs, in multiples of its hot block's launches
XVAL_RANGE = "xval"  # the NVTX range ncu profiles
MODES = {"graphs": ["--graph-profiling", "graph"], "lone": []}  # lone: ncu's default, a graph's kernels one by one
TIMEOUT_S = 600.0


def ncu_command(ncu: str, impl: str, shapes_file: Path, mode: str) -> list[str]:
    from lab.measure.ncu_metrics import METRICS

    return [ncu, *MODES[mode], "--clock-control", "none", "--cache-control", "none", "--print-units", "base",
            "--nvtx", "--nvtx-include", f"{XVAL_RANGE}/", "--csv", "--page", "raw", "--metrics",
            METRICS["duration"], sys.executable, "-m", "lab.measure.ncu_xval", "--target", impl,
            str(shapes_file), mode]


def plan_path(shapes_file: Path, mode: str) -> Path:
    """Where the target writes what it launched in `mode`, a shape a dict (the host pairs ncu's rows by it)."""
    return shapes_file.with_suffix(f".{mode}.json")


def rest_path(shapes_file: Path) -> Path:
    """Where the graphs target leaves the shapes whose hot block is one launch, for the lone target (so that no
    shape's inputs are made and timed twice)."""
    return shapes_file.with_suffix(".rest.json")


# ---------------------------------------------------------------------------------------------
# Pairing ncu's rows with what was launched (pure: tested without a GPU)
# ---------------------------------------------------------------------------------------------


def slope_fit(launches: list[int], durations_us: list[float]) -> dict:
    """Time per launch from graphs of different sizes: the Theil-Sen slope and its 95 % interval, and the
    graphs' fixed cost (the median of duration - slope x launches)."""
    from scipy.stats import theilslopes

    fit = theilslopes(durations_us, launches, alpha=0.95)
    overhead = statistics.median(d - fit.slope * n for n, d in zip(launches, durations_us))
    return {"per_launch_us": float(fit.slope), "low_us": float(fit.low_slope), "high_us": float(fit.high_slope),
            "overhead_us": float(overhead)}


def lone_fit(durations_us: list[float]) -> dict:
    """Time per launch from lone launches: their median, the quartiles beside it (not an interval)."""
    q1, _, q3 = statistics.quantiles(durations_us, n=4, method="inclusive")
    return {"per_launch_us": statistics.median(durations_us), "low_us": q1, "high_us": q3, "overhead_us": 0.0}


def pair(plan: list[dict], kernels: list[dict], replays: int = REPLAYS) -> list[dict]:
    """ncu's profiled results (lab.measure.ncu_metrics.parse_ncu_csv, in order) matched to the plan's shapes:
    len(launches) x `replays` graphs a shape in "graphs" mode; in "lone" mode `replays` launches, each its
    kernels up to a separator kernel. Any other count raises ValueError rather than pair a time with the
    wrong shape."""
    from lab.measure.profile import SEPARATOR_KERNEL

    rows, at = [], 0
    for p in plan:
        if p["mode"] == "graphs":
            count = len(p["launches"]) * replays
            mine = kernels[at: at + count]
            at += count
            if len(mine) != count or any(k["kernel"] != "graph" or k["duration"] is None for k in mine):
                raise ValueError(f"{p['shape']}: expected {count} profiled graphs, found "
                                 f"{sum(k['kernel'] == 'graph' for k in mine)}")
            x = [n for n in p["launches"] for _ in range(replays)]
            y = [float(k["duration"]) for k in mine]
            fit = slope_fit(x, y)
        else:
            x, y = [], []
            while len(y) < replays:
                parts = []
                while at < len(kernels) and SEPARATOR_KERNEL not in str(kernels[at]["kernel"]):
                    parts.append(kernels[at]["duration"])
                    at += 1
                if at == len(kernels) or not parts or any(d is None for d in parts):
                    raise ValueError(f"{p['shape']}: lone launch {len(y) + 1} of {replays} has no timed kernels "
                                     "before a separator")
                at += 1
                x.append(1)
                y.append(float(sum(parts)))  # a launch of several kernels: its kernels, back to back
            fit = lone_fit(y)
        rows.append({"shape": p["shape"], "mode": p["mode"], "hot_reps": p["hot_reps"], "launches": x,
                     "durations_us": y, **fit})
    if at != len(kernels):
        raise ValueError(f"{len(kernels) - at} profiled result(s) left over after the plan's shapes")
    return rows


# ---------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------


def crosscheck(impl: str, shapes: dict, out_dir: Path, timeout: float = TIMEOUT_S, gpu: str | None = None) -> dict:
    """ncu's time per launch of `impl` at `shapes` ({lab.kernels.shape.Shape: the input sets its hot mode
    rotates through, lab.studies.measure_shape.input_sets}), one ncu process a mode, its CSV kept (gzipped)
    in out_dir. {"impl", "replays", "rows": [pair()'s rows], "errors": {mode: why}}; never raises where
    ncu cannot run (the errors say why). `gpu`: the CUDA_VISIBLE_DEVICES entry its ncu runs on
    (lab.measure.ncu_process.run_in_group's)."""
    from lab.measure import ncu_metrics, ncu_process

    out = {"impl": impl, "replays": REPLAYS, "rows": [], "errors": {}}
    ncu = ncu_process.find_ncu()
    if ncu is None:
        out["errors"] = {m: "ncu not found (PATH or the CUDA home's bin/)" for m in MODES}
        return out
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    shapes_file = out_dir / f"ncu_xval_{impl}_shapes.json"
    shapes_file.write_text(json.dumps([{"shape": s.spec, "input_sets": int(n)} for s, n in shapes.items()]))
    rest_path(shapes_file).unlink(missing_ok=True)  # an earlier attempt's, never the lone target's list
    for mode in MODES:
        todo = rest_path(shapes_file) if mode == "lone" and rest_path(shapes_file).exists() else shapes_file
        try:
            rc, text, err = ncu_process.run_in_group(ncu_command(ncu, impl, todo, mode), timeout, gpu)
        except Exception as exc:  # noqa: BLE001 - a timeout or a failed start: recorded, the run goes on
            out["errors"][mode] = f"{type(exc).__name__}: {exc}"
            continue
        # gzip: each row repeats the device's attributes (1.7 MB plain for 16 shapes' graphs)
        (out_dir / f"ncu_xval_{impl}_{mode}.csv.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
        why = ncu_process.failure_reason(rc, text, err)
        if why:
            out["errors"][mode] = why
            continue
        try:
            plan = json.loads(plan_path(todo, mode).read_text())
            out["rows"] += pair(plan, ncu_metrics.parse_ncu_csv(text))
        except (OSError, ValueError) as exc:
            out["errors"][mode] = f"{type(exc).__name__}: {exc}"
    return out


# ---------------------------------------------------------------------------------------------
# Target side (inside ncu)
# ---------------------------------------------------------------------------------------------


def target(impl: str, shapes_file: Path, mode: str) -> None:
    """Every shape whose hot block is of `mode` (HotTimer's reps > 1: graphs; 1: lone), launched as above
    inside the XVAL_RANGE; the plan goes to plan_path()."""
    import torch

    from lab.kernels.shape import Shape
    from lab.measure import peers, profile, timing

    peer = peers.get(impl)
    plan, rest = [], []
    for item in json.loads(Path(shapes_file).read_text()):
        word = item["shape"]
        shape = Shape.parse(word)
        sets = [shape.random_inputs() for _ in range(item["input_sets"])]
        with peer.context():
            launches = [peer.bind(q, k, v, shape.causal, None) for q, k, v in sets]
            block = timing.HotTimer(launches)  # the hot mode's own rule for its block
            block.graph.replay()
            torch.cuda.synchronize()
            if (block.reps > 1) != (mode == "graphs"):  # the other process profiles it
                rest.append(item)
                del sets, launches, block
                torch.cuda.empty_cache()
                continue
            sizes = [m * block.reps for m in SIZES] if mode == "graphs" else [1]
            graphs = [timing.capture_graph(launches, n) for n in sizes] if mode == "graphs" else []
            for graph in graphs:
                graph.replay()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push(XVAL_RANGE)
            for graph in graphs:
                for _ in range(REPLAYS):
                    graph.replay()
                    torch.cuda.synchronize()
            if mode == "lone":
                for _ in range(REPLAYS):
                    launches[0]()
                    torch.cuda._sleep(profile.SEPARATOR_CYCLES)
                    torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
        plan.append({"shape": word, "mode": mode, "hot_reps": block.reps, "launches": sizes,
                     "input_sets": len(sets)})
        del sets, launches, block, graphs
        torch.cuda.empty_cache()
    plan_path(Path(shapes_file), mode).write_text(json.dumps(plan))
    if mode == "graphs":
        rest_path(Path(shapes_file)).write_text(json.dumps(rest))


def main(argv: list[str] | None = None) -> int:
    from lab.cli import OneLineParser

    ap = OneLineParser(prog="python -m lab.measure.ncu_xval", description="the target side, run inside ncu")
    ap.add_argument("--target", required=True, metavar="IMPL")
    ap.add_argument("shapes_file", type=Path)
    ap.add_argument("mode", choices=list(MODES))
    a = ap.parse_args(argv)
    target(a.target, a.shapes_file, a.mode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
