"""Each forced chunk count's speed over the rule's (the rule's median over the configuration's: > 1 is faster), per
shape and mode, from a call's sweep.json, with the samples' spread (min-max over the median, per configuration).

    python ratios.py call1-h100/sweep.json
"""
import json
import statistics
import sys

rec = json.load(open(sys.argv[1]))
print(f"{rec['gpu']}: speed over the rule (rule median / configuration median); chunks in []")
for row in rec["rows"]:
    med, spl = row["median_us"], row["splits"]
    rule = med["rule"]
    spread = {n: (max(s) - min(s)) / statistics.median(s) for n, s in row["samples"].items()}
    cells = [f"{n}[{spl[n]}] {rule / med[n]:.3f}x" for n in ("c4", "c8") if n in med]
    print(f"{row['shape']:<34} {row['mode']:<4} rule[{spl['rule']}] {rule:6.1f} us  " + "  ".join(cells)
          + f"  (spread rule {spread['rule']:.1%})")
