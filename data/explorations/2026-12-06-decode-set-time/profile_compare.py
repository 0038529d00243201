"""Each profiled call's ncu numbers in two of stage.py's configurations side by side (one process a shape against
both shapes in one): the ratio of new to old per (implementation, shape) for the call's duration, DRAM bytes and
DRAM throughput. python profile_compare.py OLD.json.gz NEW.json.gz"""
import gzip
import json
import sys

old, new = (json.load(gzip.open(p)) for p in sys.argv[1:3])
base = {(r["impl"], r["shape"]): r for r in old["profile"]}
print(f"{'impl':<28} {'shape':<24} {'duration':>9} {'dram bytes':>10} {'dram %':>8}")
worst = {"duration_us": 1.0, "dram_bytes": 1.0, "dram_throughput_pct": 1.0}
for r in new["profile"]:
    b = base[(r["impl"], r["shape"])]
    ratios = {k: r[k] / b[k] for k in worst}
    for k, x in ratios.items():
        worst[k] = x if abs(x - 1) > abs(worst[k] - 1) else worst[k]
    print(f"{r['impl']:<28} {r['shape']:<24} {ratios['duration_us']:9.3f} {ratios['dram_bytes']:10.3f} "
          f"{ratios['dram_throughput_pct']:8.3f}")
print(f"{len(new['profile'])} calls, all ok: {all(r['ok'] for r in new['profile'])}; the ratio furthest from 1: "
      + ", ".join(f"{k} {v:.3f}" for k, v in worst.items()))
