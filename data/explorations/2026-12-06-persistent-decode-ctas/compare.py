"""Issue 50: step 72 (persistent_decode_ctas) against its parent, step 70 (l2_promotion_by_gpu), and the run's decode
peers at every shape of the decode set, timed the way a run times its decode set
(lab.studies.measure_decode.measure_decode_shape: one randomized interleave a mode until the run's decode stopping
rule), hot and cold. Printed per shape and mode: each step's median, the step against its parent and both against the
fastest peer, with the report's paired interval (lab.report.sections.decode.speed_interval).

    python compare.py OUT                   # on the GPU: times, writes OUT/compare.json, prints the lines
    python compare.py --table compare.json  # anywhere: the README's table from a call's compare.json
"""
import json
import os
import sys

from lab.report.sections.decode import fastest_peer, medians, shape_of, speed_interval

# COMPARE_STEP and COMPARE_PARENT name another pair (../2026-12-07-longest-first-deal: steps 73 and 72).
STEP = os.environ.get("COMPARE_STEP", "persistent_decode_ctas")
PARENT = os.environ.get("COMPARE_PARENT", "l2_promotion_by_gpu")
MODES = ("hot", "cold")


def measure(out: str) -> dict:
    from lab import variants
    from lab.studies.decode_study import decode_rule, gpu_clocks, gpu_peers
    from lab.studies.measure_decode import measure_decode_shape
    from lab.studies.params import RunParams
    from lab.studies.shapes import decode_shapes

    kernels = {name: variants.load(name) for name in (PARENT, STEP)}
    params = RunParams().resolved()
    peers, rule, clocks = gpu_peers(params), decode_rule(params), gpu_clocks()
    record = {"step": STEP, "parent": PARENT, "peers": [p.name for p in peers], "rows": [], "notes": []}
    for i, shape in enumerate(decode_shapes()):
        _, rows, notes = measure_decode_shape(shape, kernels, peers, MODES, rule, clocks, "persistent", seed=11 + i)
        record["rows"] += rows
        record["notes"].append(notes)
        json.dump(record, open(f"{out}/compare.json", "w"), indent=1)  # after every shape: nothing measured is lost
    return record


def rows_by_shape(record: dict):
    """(mode, shape spec, step's row, parent's row, fastest peer's row or None), hot then cold."""
    peers = record.get("peers") or sorted({r["impl"] for r in record["rows"]} - {STEP, PARENT})  # call 1: no "peers"
    for mode in MODES:
        for key, impls in medians(record["rows"], mode).items():
            yield mode, shape_of(key).spec, impls.get(STEP), impls.get(PARENT), fastest_peer(impls, peers)


def interval(a: dict, b: dict | None) -> str:
    if not a or not b:
        return "no peer"
    s, lo, hi = speed_interval(a, b)
    return f"{s:.4f}x [{lo:.4f}, {hi:.4f}]"


if sys.argv[1] == "--table":
    print(f"| shape | mode | {PARENT} (µs) | {STEP} (µs) | {STEP} / {PARENT} | {PARENT} vs peer | {STEP} vs peer | "
          "fastest peer |")
    print("|---|---|---:|---:|---|---|---|---|")
    for mode, spec, step, parent, best in rows_by_shape(json.load(open(sys.argv[2]))):
        peer = f"{best['impl']} {best['median_us']:.2f}" if best else "none takes it"
        print(f"| {spec} | {mode} | {parent['median_us']:.2f} | {step['median_us']:.2f} | {interval(step, parent)} | "
              f"{interval(parent, best)} | {interval(step, best)} | {peer} |")
else:
    for mode, spec, step, parent, best in rows_by_shape(measure(sys.argv[1])):
        line = f"{mode} {spec}: step {step['median_us']:.2f} us, parent {parent['median_us']:.2f} us, " \
               f"{interval(step, parent)} parent; parent {interval(parent, best)}; step {interval(step, best)}"
        print(line + (f" | {best['impl']} {best['median_us']:.2f} us" if best else " | no peer"), flush=True)
