"""Stand-ins for the decode set's GPU work (build, timing, copy), shared by the in-process tests and the
child processes that stand in for a GPU's decode part (tests/test_decode_study.py): a shape's rows are a
function of the shape and the kernels alone, so a shared run and a one-process run can be compared row
for row; every call is logged to the file named by DECODE_FAKE_LOG where set (one JSON line: the process's
CUDA_VISIBLE_DEVICES, the shape, the seed); DECODE_FAKE_DIE_AT="GPU:shape id" ends
that GPU's child there, as a lost process."""

import json
import os

FAKE_FN = "fake decode kernel"


def build(names, progress, broken=""):
    return {n: (None, {"error": "nvcc: no"}) if n == broken else (FAKE_FN, {"ok": True}) for n in names}


def measure(shape, kernels, peers, modes, rule, clocks, run_id, seed, progress):
    if os.environ.get("DECODE_FAKE_LOG"):
        with open(os.environ["DECODE_FAKE_LOG"], "a") as f:
            f.write(json.dumps({"gpu": os.environ.get("CUDA_VISIBLE_DEVICES", ""), "shape": shape.id, "seed": seed,
                                "kernels": list(kernels), "cap_s": rule.cap_s, "modes": list(modes)}) + "\n")
    if os.environ.get("DECODE_FAKE_DIE_AT") == f"{os.environ.get('CUDA_VISIBLE_DEVICES')}:{shape.id}":
        raise SystemExit(3)  # a lost child: not an Exception, so no shape's note catches it
    rows = [dict(impl=n, B=shape.B, H=shape.H, H_kv=shape.H_kv, D=shape.D, cache_len=shape.cache_len,
                 q_len=shape.q_len, mixed=shape.mixed, page_size=shape.page_size or 0, dtype=shape.dtype,
                 mode=m, median_us=10.0 + i, ci_lo_us=9.5 + i, ci_hi_us=10.5 + i,
                 gbps=shape.bytes_moved() / ((10.0 + i) * 1e3))
            for m in modes for i, n in enumerate([*kernels, "sdpa_cudnn"])]
    samples = [dict(impl=r["impl"], mode=r["mode"], latency_us=r["median_us"], B=shape.B) for r in rows]
    return samples, rows, {"shape": shape.id, "unsupported": {}, "errors": {}}


def check(step, fn, shape, index):
    """Passes, except `step` DECODE_FAKE_FAIL names ("step" everywhere, "GPU:step" in that GPU's child only);
    each call logged to DECODE_FAKE_CHECKS where set (the GPU and the case)."""
    gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    if os.environ.get("DECODE_FAKE_CHECKS"):
        with open(os.environ["DECODE_FAKE_CHECKS"], "a") as f:
            f.write(json.dumps({"gpu": gpu, "case": f"{step}/{shape.id}/{index}"}) + "\n")
    if os.environ.get("DECODE_FAKE_DIE_IN_CHECK") == gpu:
        raise SystemExit(4)  # a child lost before it wrote any result
    fail = os.environ.get("DECODE_FAKE_FAIL", "")
    failed = fail in (step, f"{gpu}:{step}")
    return {"impl": step, "case": shape.id, "passed": not failed, "max_abs_err": 0.5, "error": ""}


def copy():
    gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    return {"bytes": 2 * (256 << 20), "median_us": 100.0, "gbps": 5368.7 + (int(gpu) if gpu.isdigit() else 0),
            "samples": 15}


# A child standing in for lab.studies.decode_child on a GPU: its real time_part, with these stand-ins.
CHILD = r"""
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[5])
import decode_fakes
from lab.measure import records
from lab.studies import decode_child
rec = records.RunRecord.open(sys.argv[1])
decode_child.time_part(rec, [int(i) for i in sys.argv[2].split(",") if i], sys.argv[3].split(","), Path(sys.argv[4]),
                       lambda s: print(s, flush=True), build=decode_fakes.build, measure=decode_fakes.measure,
                       copy=decode_fakes.copy, peers=[], check=decode_fakes.check,
                       checks=[int(k) for k in sys.argv[6].split(",") if k])
"""


def child_command(run_dir, indices, steps, out, checks=()):
    import sys

    return [sys.executable, "-c", CHILD, str(run_dir), ",".join(map(str, indices)), ",".join(steps), str(out),
            os.path.dirname(os.path.abspath(__file__)), ",".join(map(str, checks))]
