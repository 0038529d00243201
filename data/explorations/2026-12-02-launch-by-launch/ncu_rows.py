"""One line a profiled kernel of `ncu --csv --page raw --print-units base` captures (call 4; call 2 ran the same
parsing inline): the time and the raw metrics the capture holds, in the capture's column order.

    python ncu_rows.py ncu_*.csv
"""
import csv
import sys

for path in sys.argv[1:]:
    rows, header = [], None
    for fields in csv.reader(l for l in open(path) if l.startswith('"')):
        if fields and fields[0] == "ID":
            header = fields
        elif header and len(fields) == len(header) and fields[0].strip().isdigit():
            rows.append(dict(zip(header, fields)))
    for r in rows:
        plain = {m: v.replace(",", "") for m, v in r.items() if "__" in m}
        metrics = [(m, float(v)) for m, v in plain.items() if v.replace(".", "", 1).isdigit()]
        print(path.split("/")[-1], ", ".join(f"{m} {v:.6g}" for m, v in metrics))
