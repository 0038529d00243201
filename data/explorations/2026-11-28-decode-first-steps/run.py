"""Issue 50, first decode steps on one GPU: build each decode step, check it on the decode grid and on
the decode set's shapes (the fp32 reference, poisoned outputs, lab.measure.decode_check), and time it
against SDPA's backends and a 256 MB device-to-device copy (hot: a CUDA graph of back-to-back launches,
lab.measure.timing.HotTimer; medians of 15 samples). Writes decode.json to $OUT (or argv[1]).

    PYTHONPATH=. python data/explorations/2026-11-28-decode-first-steps/run.py $OUT [step,step@MACRO=VALUE]

A step given as name@MACRO=VALUE is built with that macro defined (a knob of its source), under that name.
"""

import json
import os
import statistics
import sys
import time
import traceback

import torch

from lab import variants
from lab.kernels.decode import DecodeShape
from lab.measure.decode_check import check_decode_case, decode_grid
from lab.measure.decode_peers import DecodeSdpaPeer
from lab.measure.timing import HotTimer, l2_bytes
from lab.studies.shapes import decode_shapes, streams_from_hbm

out_dir = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", ".")
steps = sys.argv[2].split(",") if len(sys.argv) > 2 else variants.names(problem="decode")
SAMPLES = 15
record = {"gpu": torch.cuda.get_device_name(), "l2_bytes": l2_bytes(), "steps": steps, "checks": [], "timing": []}


def median_us(launch):
    t = HotTimer(launch)
    return statistics.median(t.samples(SAMPLES))


# The copy bandwidth: read plus write of a 256 MB buffer.
src = torch.empty(256 << 20, dtype=torch.uint8, device="cuda").random_()
dst = torch.empty_like(src)
copy_us = median_us(lambda: dst.copy_(src))
record["copy"] = {"bytes": 2 * src.numel(), "us": copy_us, "tb_s": 2 * src.numel() / copy_us / 1e6}
del src, dst
print(f"copy: {record['copy']['tb_s']:.2f} TB/s", flush=True)

calls = {}
for name in steps:
    t0 = time.time()
    try:
        base, _, knob = name.partition("@")
        defines = dict([knob.split("=", 1)]) if knob else {}
        calls[name] = variants.load(base, defines=defines, impl=name.replace("@", "_").replace("=", "_"))
    except Exception as exc:  # noqa: BLE001
        record["checks"].append({"impl": name, "error": f"build: {exc}"[:2000]})
        continue
    print(f"built {name} in {time.time() - t0:.1f} s", flush=True)
    fn = calls[name]
    call = lambda q, k, v, lens, table, o, fn=fn: fn(q, k, v, lens, table, out=o)  # noqa: E731
    cases = decode_grid() + [s for s in decode_shapes() if s.cache_bytes < 1.2e9]
    for i, shape in enumerate(cases):
        try:
            r = check_decode_case(name, call, shape, i)
        except Exception as exc:  # noqa: BLE001
            r = {"impl": name, "case": shape.id, "passed": False, "error": traceback.format_exc()[-1500:]}
        record["checks"].append(r)
        if not r.get("passed"):
            print("FAIL", name, shape.id, r.get("max_abs_err"), r.get("tolerance"), r.get("error", "")[:300], flush=True)
        torch.cuda.empty_cache()
    ok = sum(r.get("passed", False) for r in record["checks"] if r["impl"] == name)
    print(f"{name}: {ok}/{len(cases)} cases pass", flush=True)

peers = [DecodeSdpaPeer(b) for b in ("cudnn", "flash", "efficient", "default")]
for shape in decode_shapes():
    x = shape.random_inputs(device="cuda", generator=torch.Generator().manual_seed(7))
    args = (x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"])
    row = {"shape": shape.id, "bytes": shape.bytes_moved(), "streams": streams_from_hbm(shape, l2_bytes()), "us": {}}
    for name, fn in calls.items():
        try:
            fn(*args, out=x["out"])  # validated once
            row["us"][name] = median_us(lambda fn=fn: fn.launch(*args, x["out"]))
        except Exception as exc:  # noqa: BLE001
            row["us"][name] = f"{type(exc).__name__}: {exc}"[:300]
    for peer in peers:
        try:
            with peer.context():
                launch = peer.bind(*args)
                launch()
                row["us"][peer.name] = median_us(launch)
        except Exception as exc:  # noqa: BLE001
            row["us"][peer.name] = f"{type(exc).__name__}: {exc}"[:200]
    record["timing"].append(row)
    best = {k: v for k, v in row["us"].items() if isinstance(v, float)}
    print(shape.spec, "  ".join(f"{k} {v:.1f}us {row['bytes'] / v / 1e6 / record['copy']['tb_s']:.2f}" for k, v in best.items()), flush=True)
    del x, args
    torch.cuda.empty_cache()

with open(os.path.join(out_dir, "decode.json"), "w") as f:
    json.dump(record, f, indent=1)
