"""Which implementation's block of samples keeps the hold waiting (replay F/H of call 3 failed: a
block timed out three times). For every implementation of job 0 of 5cfdce3's plan (and its peers),
hot and cold: three blocks of 9 behind the hold, with the host's enqueue time of each block and
whether the hold timed out. Usage: python which_blocks.py OUT_DIR"""
import json
import sys
import time
import traceback
from pathlib import Path

import torch

from lab.__main__ import _load_built
from lab.measure import hold as holds
from lab.measure import peers as P
from lab.measure import timing
from lab.studies.replicates import Job

out = Path(sys.argv[1])
plan = json.loads(Path("data/explorations/2026-11-25-timing-overhead/plan_5cfdce3.json").read_text())
job = Job.from_json(plan["jobs"][0])
kernels, _ = _load_built(job.impls)
peers, _ = P.resolve(plan["peers"])
shape = job.shape
sets = [shape.random_inputs(outputs=True) for _ in range(4)]
launches, contexts = {}, {}
for name, attn in kernels.items():
    launches[name] = [lambda a=attn, t=t: a.launch(t[0], t[1], t[2], t[3], shape.causal) for t in sets]
for peer in peers:
    launches[peer.name] = [peer.bind(t[0], t[1], t[2], shape.causal, None) for t in sets]
    contexts[peer.name] = peer.context
hold = holds.default()
real_enqueue, real_release = hold.enqueue, hold.release
stamp = {}
hold.enqueue = lambda s: (stamp.__setitem__("t0", time.perf_counter()), real_enqueue(s))[1]
hold.release = lambda: (stamp.__setitem__("t1", time.perf_counter()), real_release())[1]
rows = []
import contextlib  # noqa: E402

for mode in ("cold", "hot"):
    for name, ls in launches.items():
        ctx = contexts.get(name, contextlib.nullcontext)
        row = {"impl": name, "mode": mode, "enqueue_ms": [], "timed_out": [], "error": ""}
        try:
            with ctx():
                timer = timing.HotTimer(ls) if mode == "hot" else timing.ColdTimer(ls)
                for _ in range(3):
                    try:
                        timing.timed_blocks(9, timer.graph.replay if mode == "hot" else timer.launch,
                                            before=None if mode == "hot" else timer.flusher, hold=hold)
                        row["timed_out"].append(False)
                    except RuntimeError as exc:
                        row["timed_out"].append(str(exc)[:80])
                    row["enqueue_ms"].append(round(1e3 * (stamp["t1"] - stamp["t0"]), 3))
        except Exception as exc:  # noqa: BLE001
            row["error"] = traceback.format_exc()[-600:]
        rows.append(row)
        bad = any(row["timed_out"]) or row["error"]
        print(f"{mode:<4} {name:<48} enqueue ms {row['enqueue_ms']} {'TIMED OUT' if any(row['timed_out']) else ''}"
              f"{' ERROR ' + row['error'][-200:] if row['error'] else ''}", flush=True)
(out / "which_blocks.json").write_text(json.dumps(rows, indent=1))
