"""The decode.json of stage.py's configurations side by side: the seconds of each part, and per hot and cold row
(implementation, shape) the median and the interval's half-width of new over old. python compare.py A.json B.json..."""
import json
import statistics
import sys

runs = {p: json.load(open(p)) for p in sys.argv[1:]}
for p, d in runs.items():
    print(f"{p}: seconds {d['seconds']}")
    n = {m: sum(r["n"] for r in d["rows"] if r["mode"] == m) for m in ("hot", "cold")}
    print(f"   samples hot {n['hot']} cold {n['cold']}; rows {len(d['rows'])}; stopped "
          f"{dict((s, sum(r['stopped_by'] == s for r in d['rows'])) for s in {r['stopped_by'] for r in d['rows']})}")
key = lambda r: (r["impl"], r["B"], r["H"], r["H_kv"], r["D"], r["cache_len"], r["q_len"], r["mixed"],
                 r["page_size"], r["mode"])
paths = list(runs)
base = {key(r): r for r in runs[paths[0]]["rows"]}
for p in paths[1:]:
    for mode in ("hot", "cold"):
        ratios, hw_a, hw_b = [], [], []
        for r in runs[p]["rows"]:
            b = base.get(key(r))
            if not b or r["mode"] != mode:
                continue
            ratios.append(r["median_us"] / b["median_us"])
            hw_a.append((b["ci_hi_us"] - b["ci_lo_us"]) / 2 / b["median_us"])
            hw_b.append((r["ci_hi_us"] - r["ci_lo_us"]) / 2 / r["median_us"])
        ratios.sort()
        print(f"{p} over {paths[0]}, {mode}: {len(ratios)} rows; median ratio {statistics.median(ratios):.4f} "
              f"(10th-90th {ratios[len(ratios) // 10]:.4f}-{ratios[9 * len(ratios) // 10]:.4f}, "
              f"min {ratios[0]:.4f}, max {ratios[-1]:.4f}); half-width median {statistics.median(hw_a):.4f} -> "
              f"{statistics.median(hw_b):.4f}, 90th {sorted(hw_a)[9 * len(hw_a) // 10]:.4f} -> "
              f"{sorted(hw_b)[9 * len(hw_b) // 10]:.4f}")
