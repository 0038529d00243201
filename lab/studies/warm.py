"""flex_attention's compiles for a run's timing shapes and decode shapes, made ahead of the timing stage.

flex_attention is compiled per shape (dynamic=False), and every timing replicate is a fresh process:
the first replicate compiles each shape while it measures, the later ones find inductor's and
Triton's on-disk caches warm (in the H100 run 20261125T151804Z-a3638fc, replicate 0 took 53-57 s
longer than replicates 1 and 2; with this warm-up, in 20261125T214832Z-5cfdce3 (git history), 7-10 s
longer). The pipeline runs this module in a background process while the correctness stage keeps the
GPU busy with small cases and the CPU cores mostly idle, and waits for it before the timing stage;
nothing measured depends on it (a shape whose warm-up fails is only recorded), it only moves the
compiles off the timing stage's clock. The shapes are dealt to WORKERS processes that compile side by
side: one process took 69 s for the 36 shapes of 20261126T083634Z-517446e (git history), longer
than that run's correctness stage (64.6 s), so the timing stage waited for it.

    python -m lab.studies.warm RUN_ID     # writes flex_warmup.json into the run folder
"""

from __future__ import annotations

import os
import sys
import time

from lab.cli import OneLineParser
from lab.studies.params import RunParams

RECORD = "flex_warmup.json"
# Processes compiling side by side. Each pays its own first compile (13 s of the 69 s above: inductor's
# and Triton's start), the rest is about 1.6-2.5 s a shape: two took 52.3 s (H100) and 49.4 s (H200) for
# the 36 shapes in 20261126T123735Z-1a31dde and 125209Z, under correctness stages of 80.1 and 73.0 s,
# and cost that stage a few seconds at most (data/explorations/2026-11-26-correctness-contention).
WORKERS = 2


def workers_for(p: RunParams, cpus: int | None = None) -> int:
    """WORKERS a GPU of the run (its recorded GPUS: lab.studies.gpu_pool.for_run), at most half the CPU
    cores and never fewer than WORKERS: with its correctness grid shared over N GPUs the correctness stage
    takes about 1/N of its time, and the warm-up beside it must shrink too, or the timing stage waits for
    it (data/checks/2026-11-28-h200x2-gpus-ablation: a cold warm-up of 60.6 s beside a shared correctness
    stage of 22.1 s)."""
    try:
        gpus = max(1, int(p.gpus))
    except (TypeError, ValueError):  # "all" in a run started before for_run recorded the count
        gpus = 1
    cpus = cpus if cpus is not None else (os.cpu_count() or 2)
    return max(WORKERS, min(WORKERS * gpus, cpus // 2))


# inductor's compile pool of each process (torch's default: the cores, up to 32)
COMPILE_THREADS_ENV = "TORCHINDUCTOR_COMPILE_THREADS"


def compile_threads(workers: int, cpus: int | None = None) -> int:
    """Inductor's compile threads for each of `workers` warm-up processes: half the CPU cores shared among them
    (at least one each), the other half left to the correctness stage beside them. Untuned, each process
    would start up to 32 (the 4-GPU run of 4d2adc9: 8 processes, 64 cores), and its correctness stage, four
    children beside the warm-up, took 48.6 s for a quarter of the grid each, where one process had taken
    65.3 s for all of it (data/checks/2026-11-28-h200x4-gpus-ablation; how much of that was this contention
    was not measured)."""
    cpus = cpus if cpus is not None else (os.cpu_count() or 2)
    return max(1, cpus // 2 // max(1, workers))


def warm_flex(shapes, bind=None, synchronize=None, clock=time.perf_counter) -> dict:
    """One compiled call of flex_attention per shape, exactly as a replicate binds it (the shape's own
    inputs, causal, scale None), so that the caches it fills are the ones the timing looks up.
    `bind(shape)` returns the launch (default: FlexAttentionPeer on fresh inputs); a shape that
    fails is recorded with its error and the others go on. Returns the record."""
    from lab.measure.peers import first_line

    if bind is None:
        from lab.kernels.decode import DecodeShape
        from lab.measure.decode_peers import DecodeFlexPeer
        from lab.measure.peers import FlexAttentionPeer

        peer, decode = FlexAttentionPeer(), DecodeFlexPeer()

        def bind(shape):
            if isinstance(shape, DecodeShape):  # as the decode set binds it (lab.studies.measure_decode)
                x = shape.random_inputs()
                return decode.bind(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"])
            q, k, v = shape.random_inputs()
            return peer.bind(q, k, v, shape.causal, None)
    if synchronize is None:
        import torch

        synchronize = torch.cuda.synchronize
    rows, t_all = [], clock()
    for shape in shapes:
        t0 = clock()
        try:
            bind(shape)()
            synchronize()
            rows.append({"shape": shape.id, "seconds": round(clock() - t0, 2), "error": ""})
        except Exception as exc:  # noqa: BLE001 - recorded; the timing compiles the shape itself then
            rows.append({"shape": shape.id, "seconds": round(clock() - t0, 2), "error": first_line(exc)})
    return {"shapes": rows, "seconds": round(clock() - t_all, 2),
            "failed": sum(1 for r in rows if r["error"])}


def shards(shapes, workers: int) -> list[list]:
    """The shapes dealt round robin to at most `workers` processes (none empty)."""
    if workers < 1:
        raise ValueError(f"workers={workers}: the warm-up needs at least one process")
    return [shapes[i::workers] for i in range(min(workers, len(shapes)))]


def warm_in_parallel(shapes, workers: int = WORKERS, pool=None, warm=None, clock=time.perf_counter) -> dict:
    """warm_flex over the shards of `shapes`, one process each (`pool`: a concurrent.futures executor,
    default processes started by spawn, as CUDA needs). Rows come back in the run's order; a shard
    whose process dies has its shapes recorded as failed and the others go on. The record's
    `seconds` is the wall time of all of it, its rows' the compiles, shard by shard."""
    from lab.measure.peers import first_line

    warm = warm or warm_flex
    parts, t0, own = shards(shapes, workers), clock(), pool is None
    if own:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=max(1, len(parts)), mp_context=multiprocessing.get_context("spawn"))
    rows = {}
    try:
        for part, future in [(part, pool.submit(warm, part)) for part in parts]:
            try:
                done = future.result()["shapes"]
            except Exception as exc:  # noqa: BLE001 - a dead process fails its shapes, not the run
                done = [{"shape": s.id, "seconds": 0.0, "error": f"its warm-up process failed: {first_line(exc)}"}
                        for s in part]
            rows.update((r["shape"], r) for r in done)
    finally:
        if own:
            pool.shutdown()
    ordered = [rows[s.id] for s in shapes]
    return {"shapes": ordered, "seconds": round(clock() - t0, 2), "failed": sum(1 for r in ordered if r["error"]),
            "workers": len(parts)}


def shapes_to_warm(p: RunParams) -> list:
    """The run's timing shapes and its decode shapes of a contiguous cache (those the decode peer takes) where
    flex_attention is among its peers (a run that names its peers without it warms nothing)."""
    from lab.measure.peers import FLEX

    if p.peers is None or (p.peers and FLEX not in p.peers):
        return []
    return list(p.shapes) + [s for s in p.decode_shapes if not s.page_size]


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m lab.studies.warm", description=__doc__.splitlines()[0])
    ap.add_argument("run_id")
    ap.add_argument("--workers", type=int, default=None,
                    help=f"processes compiling side by side (default: {WORKERS} a GPU of the run, workers_for)")
    args = ap.parse_args(argv)
    from lab.measure.records import RunRecord

    rec = RunRecord.open(args.run_id)
    p = RunParams.read(rec)
    workers = args.workers or workers_for(p)
    os.environ.setdefault(COMPILE_THREADS_ENV, str(compile_threads(workers)))  # the spawned processes inherit it
    record = warm_in_parallel(shapes_to_warm(p), workers)
    rec.write_json(RECORD, record)
    print(f"flex_attention warmed for {len(record['shapes'])} shapes in {record['seconds']:.0f} s"
          f" ({record['workers']} processes)"
          + (f", {record['failed']} failed" if record["failed"] else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
