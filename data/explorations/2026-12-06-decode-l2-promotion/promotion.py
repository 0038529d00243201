"""Issue 50 on the H100: what step 45 (no L2 promotion on the decode cache's tensor maps) did to each decode shape in
a recorded run, read from its decode.json: early_merge_launch's median over no_l2_promotion's (step 45 over its parent;
below 1: step 45 slower), and the branch end's against early_merge_launch, a row a (shape, mode).

    python promotion.py data/runs/<run>/decode.json
"""
import json
import sys
from collections import defaultdict

d = json.load(open(sys.argv[1]))
by = defaultdict(dict)
for r in d["rows"]:
    key = (r["B"], r["H"], r["H_kv"], r["D"], r["cache_len"], r["q_len"], bool(r["mixed"]), r["page_size"], r["mode"])
    by[key][r["impl"]] = r["median_us"]
print(f"# {sys.argv[1]}: end {d['end']}; ratios of medians (above 1: the second faster)")
print(f"{'B, H, H_kv, D, cache, q, mixed, page':<40} {'mode':<5} {'45 over 44':>10} {'end over 44':>11}")
for key, v in sorted(by.items()):
    parent, step, end = v.get("early_merge_launch"), v.get("no_l2_promotion"), v.get(d["end"])
    if parent and step and end:
        print(f"{str(key[:-1]):<40} {key[-1]:<5} {parent / step:10.3f} {parent / end:11.3f}")
