"""Sums Nsight Compute's per-SASS-instruction warp-stall samples (ncu --page source --csv
--print-source sass, from call2.tgz) by stall reason and opcode, and the instruction mix, per kernel."""
import csv, sys, collections, re
path = sys.argv[1]
rows = list(csv.reader(open(path)))
kernels = []
cur = None
for r in rows:
    if r and r[0] == "Kernel Name":
        cur = {"name": r[1], "rows": []}; kernels.append(cur); hdr = None; continue
    if r and r[0] == "Address":
        cur["hdr"] = r; continue
    if cur is not None and "hdr" in cur and r:
        cur["rows"].append(dict(zip(cur["hdr"], r)))
def num(x):
    try: return float(x.replace(",", ""))
    except: return 0.0
for k in kernels:
    R = k["rows"]
    tot = sum(num(r["Warp Stall Sampling (All Samples)"]) for r in R)
    stall_cols = [c for c in k["hdr"] if c.startswith("stall_") and "Not Issued" not in c]
    agg = collections.Counter(); byop = collections.defaultdict(collections.Counter); inst = collections.Counter()
    for r in R:
        op = r["Source"].split()[0] if r["Source"].strip() else "?"
        if op.startswith("@"): op = r["Source"].split()[1]
        opb = op.split(".")[0]
        inst[opb] += num(r["Instructions Executed"])
        for c in stall_cols:
            agg[c] += num(r[c]); byop[c][opb] += num(r[c])
    print("==", k["name"][:90], "samples", tot, "instructions", sum(inst.values()))
    for c, v in agg.most_common(8):
        print(f"  {c:<22}{v/tot*100:5.1f}%  by op: " + ", ".join(f"{o} {x/tot*100:.1f}" for o, x in byop[c].most_common(5)))
    print("  mix:", ", ".join(f"{o} {v/1e6:.1f}M" for o, v in inst.most_common(18)))
