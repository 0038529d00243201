"""Side by side, per configuration and shape, the metrics of an `ncu --csv --print-units base --metrics ...` run
of prof_one.py launches (call1.sh): one line a metric, a column a profile, and st2's value over s52's.

    python ncu_compare.py ncu_*.csv
"""
import csv, io, os, sys

profiles = {}
for f in sorted(sys.argv[1:]):
    rows = [r for r in csv.reader(io.StringIO("".join(l for l in open(f) if l.startswith('"')))) if len(r) > 5]
    if not rows:
        print(os.path.basename(f), "no rows")
        continue
    h = rows[0]
    i_n, i_v = h.index("Metric Name"), h.index("Metric Value")
    profiles[os.path.basename(f)[4:-4]] = {r[i_n]: r[i_v] for r in rows[1:]}
names = sorted({m for v in profiles.values() for m in v})
labels = list(profiles)
print(f"{'metric':78s} " + " ".join(f"{l[:26]:>26s}" for l in labels))
for m in names:
    vals = [profiles[l].get(m, "") for l in labels]
    line = f"{m:78s} " + " ".join(f"{v:>26s}" for v in vals)
    ratios = []
    for l in labels:  # st2_<shape> over s52_<shape>
        if l.startswith("st2_") and "s52_" + l[4:] in profiles:
            try:
                a, b = (float(profiles[x].get(m, "nan").replace(",", "")) for x in (l, "s52_" + l[4:]))
                ratios.append(f"{l[4:]}: {a / b:.4f}" if b else f"{l[4:]}: -")
            except ValueError:
                pass
    print(line + ("   st2/s52 " + ", ".join(ratios) if ratios else ""))
