"""A recorded run's hot medians against Nsight Compute's time per launch, each shape launched as the hot mode
launches it (issue 45's 2 % target). ncu_xval_batch.py (data/explorations/2026-11-27-fa3-peer) set the hot
median against ncu's duration of a lone launch, which ncu always serializes, and found FA3 and cuDNN 3-9 us
faster hot at the short and D = 64 shapes, where a hot block holds many launches back to back.

The hot mode (lab.measure.timing.HotTimer) times a graph of `reps` launches, about 1 ms, behind a sleep:
- where reps > 1, ncu profiles CUDA graphs of back-to-back launches as one workload each
  (`--graph-profiling graph`). A graph's duration carries a cost of ncu's (about 200-370 us on an H100,
  varying from graph to graph; attempt1/), so each shape gets graphs of reps x (1, 2, 4, 8) launches, each
  replayed REPLAYS times, and the time per launch is the Theil-Sen slope of duration against launches
  (scipy.stats.theilslopes, with its 95 % interval), in which that cost cancels;
- where reps = 1 (launches of 500 us and more), the hot sample is one launch after the sleep, and ncu
  profiles REPLAYS lone launches (median; the bracket printed is their quartiles), each closed by the
  profile stage's separator kernel so that a launch of several kernels is summed.

    PYTHONPATH=. python data/explorations/2026-11-27-ncu-hot-block/hot_block_xval.py RUN_ID OUT_DIR [IMPL ...]

At every shape where the run's hot median of IMPL is 100 us or more, over as many input sets as the run's
hot mode rotates through (lab.studies.measure_shape.input_sets), inside the NVTX range `xval`. Results pair
with shapes in order; any other count fails loudly. `--clock-control none` (the harness's clocks),
`--cache-control none` (the hot mode flushes nothing; attempt2-6 flushed L2 before each graph, which only
its first launch sees).
"""
import csv
import io
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from scipy.stats import theilslopes

REPLAYS, MIN_HOT_US = int(os.environ.get("XVAL_REPLAYS", 16)), 100.0  # 4 in attempt3/, 8 in attempt4/
# the graphs' launches, in multiples of the hot block's: attempt2-4 took about 4 ms of GPU time as the
# shortest graph (32 ms the longest, read about 1 % slow at the long shapes); attempt5 about 1 ms (at launches
# of 3 ms its 8- and 16-launch graphs, 24-48 ms, read up to 6 % slower per launch, the clock falling as in the
# sustained mode); attempt6 graphs of 1-4 launches where 1 ms would hold fewer than 2 (3 % off at three long
# shapes, the slope over so short a ladder too weak against the graphs' varying cost).
SIZES = (1, 2, 4, 8)
METRICS = {"duration": "gpu__time_duration.sum"}  # one pass: nothing replayed, nothing saved and restored


def target(impl: str, shapes_file: str, mode: str) -> None:
    """Each shape as the hot mode runs it (lab.measure.timing.HotTimer): where its block holds several
    launches, graphs of SIZES times that many, each replayed REPLAYS times (the slope); where it holds one
    launch behind the sleep, REPLAYS lone launches, each closed by the profile stage's separator kernel.
    Only the shapes of `mode` ("graphs" or "lone") are profiled; the plan names them."""
    import torch

    from lab.kernels.shape import Shape
    from lab.measure import peers, profile, timing
    from lab.studies.measure_shape import input_sets

    peer = peers.get(impl)
    plan = []
    for word in json.loads(Path(shapes_file).read_text()):
        shape = Shape.parse(word)
        sets = [shape.random_inputs() for _ in range(input_sets(shape, timing.l2_bytes()))]
        with peer.context():
            launches = [peer.bind(q, k, v, shape.causal, None) for q, k, v in sets]
            block = timing.HotTimer(launches)
            block.graph.replay()
            torch.cuda.synchronize()
            ours = (block.reps > 1) == (mode == "graphs")
            if ours and block.reps > 1:
                sizes = [m * block.reps for m in SIZES]
                graphs = [timing.capture_graph(launches, n) for n in sizes]
                for graph in graphs:
                    graph.replay()
                torch.cuda.synchronize()
                torch.cuda.nvtx.range_push("xval")
                for graph in graphs:
                    for _ in range(REPLAYS):
                        graph.replay()
                        torch.cuda.synchronize()
                torch.cuda.nvtx.range_pop()
            elif ours:
                sizes = [1]
                torch.cuda.nvtx.range_push("xval")
                for _ in range(REPLAYS):
                    launches[0]()
                    torch.cuda._sleep(profile.SEPARATOR_CYCLES)
                    torch.cuda.synchronize()
                torch.cuda.nvtx.range_pop()
        if ours:
            plan.append({"shape": word, "mode": mode, "hot_reps": block.reps, "launches": sizes,
                         "input_sets": len(sets)})
        del sets, launches, block
        torch.cuda.empty_cache()
    Path(shapes_file).with_suffix(f".{mode}.json").write_text(json.dumps(plan))


def results(text: str) -> list[dict]:
    """One dict per profiled result of `ncu --csv --page raw`: {metric: (value, unit)}."""
    from lab.measure.ncu_metrics import parse_value

    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    header, units = rows[head], rows[head + 1]
    out = []
    for r in rows[head + 2:]:
        if len(r) == len(header) and isinstance(parse_value(r[0]), float):
            out.append({h: (parse_value(v), u) for h, v, u in zip(header, r, units)} | {"kernel": r[header.index("Kernel Name")]})
    return out


def value(res: dict, name: str) -> float:
    from lab.measure.ncu_metrics import plain_number, time_to_us, unit_scale

    v, unit = res[METRICS[name]]
    return time_to_us(plain_number(v), unit) if name == "duration" else plain_number(v) * unit_scale(unit)


def pair(impl: str, shapes: list, plan: list[dict], got: list[dict], data) -> list[dict]:
    """ncu's results, in order, paired with the plan's shapes: len(SIZES) * REPLAYS graphs for a shape run as
    graphs, REPLAYS launches each ending at a separator kernel for a shape run lone; the rest fails loudly."""
    from lab.measure.profile import SEPARATOR_KERNEL

    rows, at = [], 0
    shapes = {s.spec: s for s in shapes}
    for p in plan:
        shape = shapes[p["shape"]]
        if p["mode"] == "graphs":
            mine = got[at: at + len(SIZES) * REPLAYS]
            at += len(SIZES) * REPLAYS
            if len(mine) != len(SIZES) * REPLAYS or any(r["kernel"] != "graph" for r in mine):
                raise ValueError(f"{shape.id}: expected {len(SIZES) * REPLAYS} graphs")
            x = [n for n in p["launches"] for _ in range(REPLAYS)]
            y = [value(r, "duration") for r in mine]
            # the slope: ncu's cost of a profiled graph (varying by hundreds of us) is the intercept
            fit = theilslopes(y, x, alpha=0.95)
            per, low, high = fit.slope, fit.low_slope, fit.high_slope
            overhead = statistics.median(b - per * a for a, b in zip(x, y))
        else:
            y = []
            while len(y) < REPLAYS:
                kernels = []
                while at < len(got) and SEPARATOR_KERNEL not in got[at]["kernel"]:
                    kernels.append(value(got[at], "duration"))
                    at += 1
                if at == len(got) or not kernels:
                    raise ValueError(f"{shape.id}: lone launch {len(y) + 1} has no kernels or no separator")
                at += 1
                y.append(sum(kernels))  # a launch of several kernels: their durations, back to back
            x = [1] * REPLAYS
            per, overhead = statistics.median(y), 0.0
            low, high = sorted(y)[REPLAYS // 4], sorted(y)[(3 * REPLAYS) // 4]  # quartiles, not an interval
        hot = data.median(impl, shape, "hot")
        rows.append({"shape": shape.id, "impl": impl, "mode": p["mode"], "hot_reps": p["hot_reps"], "launches": x,
                     "ncu_us": y, "input_sets": p["input_sets"], "hot_median_us": hot, "ncu_per_launch_us": per,
                     "ncu_per_launch_spread_us": [low, high], "ncu_graph_overhead_us": overhead, "ratio": hot / per,
                     "ratio_spread": [hot / high, hot / low]})
        what = (f"graphs of {p['launches'][0]:4}-{p['launches'][-1]:4} launches" if p["mode"] == "graphs"
                else f"{REPLAYS} lone launches       ")
        print(f"{shape.id:36} {impl:11} {what}: per launch {per:7.1f} [{low:7.1f}, {high:7.1f}]  hot {hot:7.1f}  "
              f"ratio {hot / per:.3f} [{hot / high:.3f}, {hot / low:.3f}]  graph overhead {overhead:6.1f} us", flush=True)
    if at != len(got):
        raise ValueError(f"{len(got) - at} results left over")
    return rows


def host(run_id: str, out_dir: Path, impls: list[str]) -> int:
    from lab.measure import profile, records
    from lab.report.load import RunData

    data = RunData(records.RunRecord.open(run_id))
    out_dir.mkdir(parents=True, exist_ok=True)
    rows, ncu = [], profile.find_ncu()
    for impl in impls:
        shapes = [s for s in data.measured_shapes if (data.median(impl, s, "hot") or 0.0) >= MIN_HOT_US]
        shapes_file = out_dir / f"shapes_{impl}.json"
        shapes_file.write_text(json.dumps([s.spec for s in shapes]))
        # graphs as one workload each; lone launches with ncu's default (a graph's kernels one by one), as
        # ncu_xval_batch.py profiled them (attempt7 profiled them under `--graph-profiling graph` and read
        # 4-24 % slow, its separator kernels 130-170 us for 1,000 cycles)
        for mode, flags in (("graphs", ["--graph-profiling", "graph"]), ("lone", [])):
            cmd = [ncu, *flags, "--clock-control", "none", "--cache-control", "none", "--print-units", "base",
                   "--nvtx", "--nvtx-include", "xval/", "--csv", "--page", "raw", "--metrics",
                   ",".join(METRICS.values()), sys.executable, __file__, "--target", impl, str(shapes_file), mode]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            (out_dir / f"ncu_{impl}_{mode}.csv").write_text(proc.stdout)
            if proc.returncode != 0:
                print(f"{impl} {mode}: ncu rc {proc.returncode}: {proc.stderr[-800:]}", flush=True)
                continue
            got = results(proc.stdout)
            plan = json.loads(shapes_file.with_suffix(f".{mode}.json").read_text())
            try:
                rows += pair(impl, shapes, plan, got, data)
            except ValueError as e:
                raise SystemExit(f"{impl} {mode}: {e}; not pairing")
    (out_dir / f"hot_block_xval_{run_id}.json").write_text(json.dumps(rows, indent=1))
    for impl in impls:
        r = [x["ratio"] for x in rows if x["impl"] == impl]
        if r:
            print(f"{impl}: {len(r)} shapes, hot / ncu per launch {min(r):.3f} to {max(r):.3f}; "
                  f"within 2 %: {sum(abs(x - 1) <= 0.02 for x in r)} of {len(r)}")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--target":
        target(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(host(sys.argv[1], Path(sys.argv[2]), sys.argv[3:] or ["flash_attn3", "sdpa_cudnn"]))
