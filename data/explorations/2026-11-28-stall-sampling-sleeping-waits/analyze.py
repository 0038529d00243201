"""Per kernel: warp-stall samples by reason and the 25 instructions with the most samples, from TAG_sass.csv
(extract call_stalls/sass_source.tgz in the current folder first).

    python analyze.py uniform_descriptors flash_attn3 uniform_descriptors_causal flash_attn3_causal > top_stalls.txt
"""
import csv, sys, collections
def load(path):
    rows = list(csv.reader(open(path)))
    hdr = rows[1]; data = [dict(zip(hdr, r)) for r in rows[2:] if len(r) == len(hdr)]
    return data
for tag in sys.argv[1:]:
    d = load(f"{tag}_sass.csv")
    stall_cols = [c for c in d[0] if c.startswith("stall_") and "Not Issued" not in c]
    tot = collections.Counter()
    for r in d:
        for c in stall_cols: tot[c] += int(r[c] or 0)
    S = sum(int(r["Warp Stall Sampling (All Samples)"] or 0) for r in d)
    I = sum(int(r["Instructions Executed"] or 0) for r in d)
    print(f"== {tag}: samples {S}, warp instructions executed {I/1e6:.1f} M")
    print("   " + ", ".join(f"{c[6:]} {v/S*100:.1f}%" for c, v in tot.most_common(10)))
    top = sorted(d, key=lambda r: -int(r["Warp Stall Sampling (All Samples)"] or 0))[:25]
    for r in top:
        s = int(r["Warp Stall Sampling (All Samples)"]); ex = int(r["Instructions Executed"] or 0)
        reasons = sorted(((int(r[c] or 0), c[6:]) for c in stall_cols), reverse=True)[:2]
        print(f"  {s/S*100:5.1f}%  exec {ex/1e3:8.0f}k  {r['Address'][-5:]}  {r['Source'].strip()[:60]:<60} {reasons}")
