"""Prints a kernel's SASS rows (address order) with executions and warp-state samples from an
ncu --page source --csv --print-source sass export: python sass_listing.py CSV KERNEL_INDEX FROM TO
(KERNEL_INDEX 0 = first kernel in the file). Used to read cuDNN's inner loop in call 2."""
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
want = int(sys.argv[2]); k = -1; out = []
for r in rows:
    if r and r[0] == "Kernel Name": k += 1; continue
    if r and r[0] == "Address": hdr = r; continue
    if k == want and r: out.append(dict(zip(hdr, r)))
num = lambda x: float(x.replace(",", "") or 0)
mufu = [i for i, r in enumerate(out) if "MUFU.EX2" in r["Source"] and num(r["Instructions Executed"]) > 1e5]
print("hot MUFU rows:", len(mufu), "first", mufu[:3], "last", mufu[-3:])
lo, hi = int(sys.argv[3]), int(sys.argv[4])
for i in range(lo, hi):
    r = out[i]
    print(i, f'{r["Source"][:64]:<64}', int(num(r["Instructions Executed"])), r["Warp Stall Sampling (All Samples)"])
