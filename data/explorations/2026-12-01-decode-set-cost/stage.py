"""Issue 50's target 4 (the decode set adds at most 60 s to a run): where the set's 93.4 s of run
20261201T211513Z-59b3f77 went and what drawing its inputs on the GPU saves. Part 1 times DecodeShape.random_inputs
per set shape, on the GPU (seed=) and, for three shapes, as before (a host generator: drawn on the host, moved);
part 2 runs the decode part of a run (lab.studies.decode_study.run: build, checks, timing) with this tree's code,
its records under OUT/runs. Usage: python stage.py OUT"""
import json
import sys
import time
from pathlib import Path

import torch

from lab.measure import records
from lab.studies import decode_study
from lab.studies.params import RunParams
from lab.studies.shapes import decode_shapes

out = Path(sys.argv[1])
HOST = {"8,32,8,128,8192,bf16", "16,32,8,128,32768,q4,page64,bf16", "8,64,8,128,131072,bf16"}
rows = []
for shape in decode_shapes():
    for how in ("device", "host") if shape.spec in HOST else ("device",):
        torch.cuda.synchronize()
        t = time.perf_counter()
        x = shape.random_inputs(seed=0) if how == "device" else shape.random_inputs(generator=torch.Generator().manual_seed(0))
        torch.cuda.synchronize()
        dt = time.perf_counter() - t
        rows.append(dict(shape=shape.spec, how=how, cache_gb=shape.cache_bytes / 1e9, seconds=round(dt, 3)))
        print(f"inputs {shape.spec:<36} {how:<6} {shape.cache_bytes / 1e9:6.3f} GB {dt:7.3f} s", flush=True)
        del x
        torch.cuda.empty_cache()
(out / "inputs.json").write_text(json.dumps(rows, indent=1))

rec = records.RunRecord(root=out / "runs")
rec.write_json("params.json", RunParams.from_text(decode="decode").resolved().to_json())
t = time.perf_counter()
got = decode_study.run(rec, progress=lambda m: print(m, flush=True))
print(f"decode stage {time.perf_counter() - t:.1f} s; seconds {got['seconds']}", flush=True)
