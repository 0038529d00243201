"""The launch-level metrics of call.sh's captures (`ncu --csv --page raw --print-units base`) side by side: per
capture, one line a metric (the SM, scheduler, DRAM and L2 counters and the launch's shape; not the device's
attributes) with the step's longest kernel's value (attention_fwd or decode_*), the peer's longest kernel's, and
the first over the second; then the derived lines: the SMs' idle share of the kernel's elapsed cycles (1 - active
mean / elapsed max) and the active cycles' spread (min / max). call/compare.txt is its output.

    python compare.py ncu_*.csv
"""
import csv
import os
import sys


def kernels_of(path):
    rows, header = [], None
    for fields in csv.reader(l for l in open(path) if l.startswith('"')):
        if fields and fields[0] == "ID":
            header = fields
        elif header and len(fields) == len(header) and fields[0].strip().isdigit():
            rows.append(dict(zip(header, fields)))
    return rows


def num(k, m):
    try:
        return float(k.get(m, "").replace(",", ""))
    except ValueError:
        return None


for path in sorted(sys.argv[1:]):
    ks = [k for k in kernels_of(path) if num(k, "gpu__time_duration.sum")]
    print(f"== {os.path.basename(path)}: {len(ks)} kernels")
    for k in ks:
        print(f"   {k.get('Kernel Name', '')[:90]}  {num(k, 'gpu__time_duration.sum'):.0f} ns")
    if len(ks) < 2:
        continue
    name = lambda k: k.get("Kernel Name", "")  # noqa: E731
    ours = [k for k in ks if "attention_fwd" in name(k) or "decode_" in name(k)]  # the steps' kernels
    theirs = [k for k in ks if k not in ours and "spin_kernel" not in name(k)]  # not the separators
    if not ours or not theirs:
        continue
    a, b = (max(g, key=lambda k: num(k, "gpu__time_duration.sum")) for g in (ours, theirs))
    keep = ("smsp__", "sm__", "dram__", "lts__", "gpu__time_duration.sum", "launch__grid_size", "launch__block_size",
            "launch__registers_per_thread")
    for m in sorted(x for x in a if x.startswith(keep) and num(a, x) is not None):
        x, y = num(a, m), num(b, m)
        r = f"{x / y:8.4f}" if y else "       -"
        print(f"{m[:84]:84s} {x:16.4f} {y if y is not None else float('nan'):16.4f} {r}")
    for label, k in (("step", a), ("peer", b)):
        el, act = num(k, "sm__cycles_elapsed.max"), num(k, "sm__cycles_active.avg")
        lo, hi = num(k, "sm__cycles_active.min"), num(k, "sm__cycles_active.max")
        if el and act and lo and hi:
            print(f"derived {label}: SMs idle {1 - act / el:.4f} of the elapsed cycles; active min / max {lo / hi:.4f}")
