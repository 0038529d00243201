"""The share of a kernel's PC samples at its wgmma waits (WARPGROUP.DEPBAR: all, and those that wait for every
wgmma in flight, gsb0 0x0), at HGMMA issue and at MUFU, from the gzipped `--page source` CSVs of call1.sh.

    python waits.py *.csv.gz
"""
import csv, gzip, io, os, sys

for path in sys.argv[1:]:
    rows = list(csv.reader(io.StringIO(gzip.open(path, "rt", errors="replace").read())))
    head = next(r for r in rows if r and r[0] == "Address")
    body = [r for r in rows if r and r[0].startswith("0x") and len(r) == len(head)]
    c = head.index("Warp Stall Sampling (All Samples)")
    total = sum(float(r[c]) for r in body)
    share = lambda text: sum(float(r[c]) for r in body if text in r[1]) / total
    print(f"{os.path.basename(path)[:-7]:48s} samples {total:7.0f}  wgmma waits {share('WARPGROUP.DEPBAR'):5.1%} "
          f"(wait for all {share('WARPGROUP.DEPBAR.LE gsb0, 0x0'):5.1%})  HGMMA issue {share('HGMMA'):5.1%}  "
          f"MUFU {share('MUFU'):5.1%}")
