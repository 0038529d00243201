"""FA3's hot medians in a recorded run against Nsight Compute, every shape in one ncu process a mode
(issue 45's 2 % target; ncu_xval_run.py, one process a launch, ran out of time on the H200 after 12 of
the shapes). At every shape where the run's hot median of IMPL is 100 us or more, three launches inside
the NVTX range `xval`, after two warm-ups; ncu replays each launch with `--clock-control none` and
`--cache-control none` (like against like: a hot launch finds what the launch before it left in L2) and
`all` (ncu's default, the profile stage's: caches flushed before each replay pass). The median of the
three durations beside the run's hot median (over its replicates, as the report computes it).

    PYTHONPATH=. python data/explorations/2026-11-27-fa3-peer/ncu_xval_batch.py RUN_ID OUT_DIR [IMPL ...]

Launches are matched to shapes in launch order: every kernel of 40 us or more is one launch's main
kernel (the shapes' medians are 100 us or more, an implementation's helper kernels a few us), three a
shape; any other count fails loudly rather than pairing a duration with the wrong shape.
"""
import json
import statistics
import subprocess
import sys
from pathlib import Path

LAUNCHES, MIN_HOT_US, MAIN_KERNEL_US = 3, 100.0, 40.0


def target(impl: str, shapes_file: str) -> None:
    import torch

    from lab.kernels.shape import Shape
    from lab.measure import peers

    peer = peers.get(impl)
    for word in json.loads(Path(shapes_file).read_text()):
        shape = Shape.parse(word)
        q, k, v = shape.random_inputs()
        with peer.context():
            launch = peer.bind(q, k, v, shape.causal, None)
            for _ in range(2):
                launch()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push("xval")
            for _ in range(LAUNCHES):
                launch()
                torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
        del q, k, v, launch
        torch.cuda.empty_cache()


def host(run_id: str, out_dir: Path, impls: list[str]) -> int:
    from lab.measure import ncu_metrics, profile, records
    from lab.report.load import RunData

    data = RunData(records.RunRecord.open(run_id))
    out_dir.mkdir(parents=True, exist_ok=True)
    rows, ncu = [], profile.find_ncu()
    for impl in impls:
        shapes = [s for s in data.measured_shapes if (data.median(impl, s, "hot") or 0.0) >= MIN_HOT_US]
        words = [s.spec for s in shapes]
        shapes_file = out_dir / f"shapes_{impl}.json"
        shapes_file.write_text(json.dumps(words))
        for cache in (("none", "all") if impl == "flash_attn3" else ("none",)):  # cuDNN: the control
            cmd = [ncu, "--clock-control", "none", "--cache-control", cache, "--print-units", "base", "--nvtx",
                   "--nvtx-include", "xval/", "--csv", "--page", "raw", "--metrics", "gpu__time_duration.sum",
                   sys.executable, __file__, "--target", impl, str(shapes_file)]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            (out_dir / f"ncu_{impl}_cache-{cache}.csv").write_text(proc.stdout)
            if proc.returncode != 0:
                print(f"{impl} cache {cache}: ncu rc {proc.returncode}: {proc.stderr[-600:]}", flush=True)
                continue
            durations = [kern["duration"] for kern in ncu_metrics.parse_ncu_csv(proc.stdout)
                         if (kern.get("duration") or 0.0) >= MAIN_KERNEL_US]
            if len(durations) != LAUNCHES * len(shapes):
                raise SystemExit(f"{impl} cache {cache}: {len(durations)} main kernels for {len(shapes)} shapes "
                                 f"x {LAUNCHES} launches; not pairing them")
            for i, shape in enumerate(shapes):
                got = durations[LAUNCHES * i: LAUNCHES * (i + 1)]
                hot = data.median(impl, shape, "hot")
                med = statistics.median(got)
                rows.append({"shape": shape.id, "impl": impl, "cache_control": cache, "hot_median_us": hot,
                             "ncu_us": got, "ncu_median_us": med, "ratio": hot / med})
                print(f"{shape.id:40} {impl:12} cache {cache:4}  hot {hot:8.1f} us  ncu {med:8.1f} us  "
                      f"ratio {hot / med:.3f}", flush=True)
    (out_dir / f"ncu_xval_batch_{run_id}.json").write_text(json.dumps(rows, indent=1))
    for impl in impls:
        for cache in ("none", "all"):
            r = [x["ratio"] for x in rows if x["impl"] == impl and x["cache_control"] == cache]
            if r:
                print(f"{impl} cache {cache}: {len(r)} shapes, hot / ncu {min(r):.3f} to {max(r):.3f}; "
                      f"within 2 %: {sum(abs(x - 1) <= 0.02 for x in r)} of {len(r)}")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--target":
        target(sys.argv[2], sys.argv[3])
    else:
        sys.exit(host(sys.argv[1], Path(sys.argv[2]), sys.argv[3:] or ["flash_attn3", "sdpa_cudnn"]))
