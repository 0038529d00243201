"""Issue 50, target 1: does the order of a mixed batch's lengths set the decode end's time at a call of one chunk a
(sequence, K/V head)? (README.md: the question, predictions and decision rule, written before the call.)

The end (LEVELS_ENDS, step 72 by default; several steps side by side) is timed the way a run times its decode set
(lab.studies.measure_shape.time_modes: one randomized interleave a mode, the run's decode stopping rule), hot then
cold, on one mixed shape's inputs with its lengths (the same multiset, so the same bytes) in several orders, each
order its own row; beside them the uniform twin of the same bytes (every sequence at the mixed lengths' mean) and
sdpa_cudnn on the set's own order.
Each is checked first at every order (lab.measure.decode_check.check_decode_case with those lengths: fp32
reference, poisoned outputs). Every sample is kept with its round (samples.json.gz), so a row's spread over rounds is
read beside its median.

    python levels.py OUT [shape]     (shape: 32,32,8,128,4096,mixed,bf16 by default)
"""
import gzip
import json
import os
import random
import sys

import torch

from lab.kernels import variants
from lab.kernels.decode import DecodeShape
from lab.measure.decode_check import check_decode_case
from lab.measure.decode_peers import DecodeSdpaPeer
from lab.studies.decode_study import decode_rule, gpu_clocks
from lab.studies.measure_decode import _kernel_launch, decode_summary_row
from lab.studies.measure_shape import time_modes
from lab.studies.params import RunParams

# LEVELS_ENDS: the steps timed (comma-separated; rows "step:order" where more than one); step 72 alone by default.
ENDS = os.environ.get("LEVELS_ENDS", "persistent_decode_ctas").split(",")
REPEATS = int(os.environ.get("LEVELS_REPEATS", "3"))


def orders(lens: list[int]) -> dict[str, list[int]]:
    """The set's lengths (longest first) in the orders timed, each a permutation of the same lengths."""
    n, desc = len(lens), sorted(lens, reverse=True)
    alternating = [desc[i // 2] if i % 2 == 0 else desc[n - 1 - i // 2] for i in range(n)]
    half = n // 2  # sequence s and s + n/2 complementary: every other length from the longest, then from the shortest
    mirrored = [desc[2 * s] for s in range(half)] + [desc[n - 1 - 2 * s] for s in range(half)]
    out = {"set_order": list(lens), "ascending": desc[::-1], "alternating": alternating, "mirrored": mirrored}
    for seed in (1, 2, 3):
        shuffled = list(lens)
        random.Random(seed).shuffle(shuffled)
        out[f"shuffled_{seed}"] = shuffled
    assert all(sorted(v) == sorted(lens) for v in out.values())
    return out


def main(out_dir: str, spec: str = "32,32,8,128,4096,mixed,bf16"):
    shape = DecodeShape.parse(spec)
    lens = shape.cache_lens()
    mean = sum(lens) // len(lens)
    twin = DecodeShape(shape.B, shape.H, shape.H_kv, shape.D, mean, dtype=shape.dtype)
    # the twin moves the mixed call's bytes to within the remainder of the mean (15 keys a head of 73,743 here)
    fns = {end: variants.load(end) for end in ENDS}
    by_order = orders(lens)
    record = {"shape": shape.spec, "ends": ENDS, "twin": twin.spec, "orders": by_order, "checks": [], "rows": []}
    for end, fn in fns.items():
        call = lambda q, k, v, n, t, o, fn=fn: fn(q, k, v, n, t, out=o)  # noqa: E731
        for i, (name, order) in enumerate(by_order.items()):
            record["checks"].append({"order": name, **check_decode_case(end, call, shape, i, cache_lens=order)})
        record["checks"].append({"order": "uniform_twin", **check_decode_case(end, call, twin, 99)})
    passed = sum(bool(c.get("passed")) for c in record["checks"])
    print(f"checks: {passed} of {len(record['checks'])} passed", flush=True)

    x, x_twin = shape.random_inputs(seed=7), twin.random_inputs(seed=8)
    launches = {}
    for end, fn in fns.items():
        label = (lambda row: f"{end}:{row}") if len(fns) > 1 else (lambda row: row)
        for name, order in by_order.items():
            xi = dict(x, cache_lens=torch.tensor(order, dtype=torch.int32, device="cuda"), out=torch.empty_like(x["q"]))
            launches[label(name)] = [_kernel_launch(fn, xi, "cuda")]
        launches[label("uniform_twin")] = [_kernel_launch(fn, dict(x_twin, out=torch.empty_like(x_twin["q"])), "cuda")]
    peer = DecodeSdpaPeer("cudnn")
    launches[peer.name] = [peer.bind(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], None)]
    notes = {"errors": {}}

    def summarize(name, mode, kept, stopped_by, dropped):
        row_shape = twin if name.endswith("uniform_twin") else shape
        return decode_summary_row(row_shape, name, mode, kept, stopped_by, dropped, 1)

    rule, clocks, samples = decode_rule(RunParams().resolved()), gpu_clocks(), []
    for repeat in range(REPEATS):  # the run's rule stops a row after 10-30 rounds; repeats give more rounds to read
        got, rows = time_modes(launches, {peer.name: peer.context}, ["hot", "cold"], rule, clocks, 11 + repeat, notes,
                               {"shape": shape.spec, "repeat": repeat}, summarize)
        samples += [dict(s, round=(repeat, s["round"])) for s in got]
        record["rows"] += [dict(r, repeat=repeat) for r in rows]
    record["notes"] = notes
    json.dump(record, open(f"{out_dir}/levels.json", "w"), indent=1)
    with gzip.open(f"{out_dir}/samples.json.gz", "wt") as f:  # thousands of samples
        json.dump(samples, f)
    print(table(samples), flush=True)


def table(samples: list) -> str:
    """Each row over every repeat: the median of its samples, and its rounds' medians: the lowest, the highest and
    their ratio."""
    import statistics

    by = {}
    for s in samples:
        if not s["throttled"]:
            by.setdefault((s["mode"], s["impl"]), {}).setdefault(tuple(s["round"]), []).append(s["latency_us"])
    lines = ["| mode | row | median us | rounds | lowest round | highest round | highest / lowest |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for (mode, impl), rounds in by.items():
        meds = [statistics.median(v) for v in rounds.values()]
        every = [x for v in rounds.values() for x in v]
        lines.append(f"| {mode} | {impl} | {statistics.median(every):.2f} | {len(meds)} | {min(meds):.2f} | "
                     f"{max(meds):.2f} | {max(meds) / min(meds):.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main(*sys.argv[1:])
