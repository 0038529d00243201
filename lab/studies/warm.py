"""flex_attention's compiles for a run's timing shapes, made ahead of the timing stage.

flex_attention is compiled per shape (dynamic=False), and every timing replicate is a fresh process:
the first replicate compiles each shape while it measures, the later ones find inductor's and
Triton's on-disk caches warm (in the H100 run 20261125T151804Z-a3638fc, replicate 0 took 53-57 s
longer than replicates 1 and 2; with this warm-up, in 20261125T214832Z-5cfdce3 (git history), 7-10 s
longer). The pipeline runs this module in a background process while the correctness stage keeps the
GPU busy with small cases and the CPU cores mostly idle, and waits for it before the timing stage;
nothing measured depends on it (a shape whose warm-up fails is only recorded), it only moves the
compiles off the timing stage's clock.

    python -m lab.studies.warm RUN_ID     # writes flex_warmup.json into the run folder
"""

from __future__ import annotations

import argparse
import sys
import time

from lab.studies.params import RunParams

RECORD = "flex_warmup.json"


def warm_flex(shapes, bind=None, synchronize=None, clock=time.perf_counter) -> dict:
    """One compiled call of flex_attention per shape, exactly as a replicate binds it (the shape's own
    inputs, causal, scale None), so that the caches it fills are the ones the timing looks up.
    `bind(shape)` returns the launch (default: FlexAttentionPeer on fresh inputs); a shape that
    fails is recorded with its error and the others go on. Returns the record."""
    from lab.measure.peers import first_line

    if bind is None:
        from lab.measure.peers import FlexAttentionPeer

        peer = FlexAttentionPeer()

        def bind(shape):
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


def shapes_to_warm(p: RunParams) -> list:
    """The run's timing shapes where flex_attention is among its peers (a run that names its peers
    without it warms nothing)."""
    from lab.measure.peers import FLEX

    if p.peers is None or (p.peers and FLEX not in p.peers):
        return []
    return list(p.shapes)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lab.studies.warm", description=__doc__.splitlines()[0])
    ap.add_argument("run_id")
    args = ap.parse_args(argv)
    from lab.measure.records import RunRecord

    rec = RunRecord.open(args.run_id)
    record = warm_flex(shapes_to_warm(RunParams.read(rec)))
    rec.write_json(RECORD, record)
    print(f"flex_attention warmed for {len(record['shapes'])} shapes in {record['seconds']:.0f} s"
          + (f", {record['failed']} failed" if record["failed"] else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
