"""Shared-memory wavefronts instruction by instruction (ncu --page source --csv --print-source sass, SourceCounters),
summed by opcode: PYTHONPATH=. python per_instr.py <tag>_sass.csv ... (the CSVs are in conflicts.tgz)."""
import csv
import sys

for path in sys.argv[1:]:
    rows = list(csv.reader(open(path)))
    hi = [i for i, r in enumerate(rows) if "Source" in r][0]
    h = rows[hi]
    ix = {c: i for i, c in enumerate(h)}
    agg = {}
    for r in rows[hi + 1:]:
        if len(r) < len(h) or not r[ix["Source"]].split():
            continue
        src = r[ix["Source"]].split()
        op = (src[1] if src[0].startswith("@") else src[0]).split(".")[0]

        def num(c):
            try:
                return float(r[ix[c]].replace(",", ""))
            except ValueError:
                return 0.0
        w = num("L1 Wavefronts Shared")
        if w > 0:
            a = agg.setdefault(op, [0, 0, 0, 0])
            for k, v in enumerate((1, w, num("L1 Wavefronts Shared Ideal"), num("L1 Wavefronts Shared Excessive"))):
                a[k] += v
    print(path, {k: tuple(int(x) for x in v) for k, v in agg.items()}, "(instructions, wavefronts, ideal, excessive)")
