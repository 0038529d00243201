"""One line a profiled kernel of `ncu --csv --page raw --print-units base` captures (call 4; call 2 ran the same
parsing inline): the time and the metrics the calls ask for (KEEP), in the capture's column order; the raw page's
device and launch attributes are left out.

    python ncu_rows.py ncu_*.csv
"""
import csv
import sys

KEEP = ("gpu__time_duration.sum", "dram__bytes_read.sum", "lts__t_sectors_op_read.sum", "sm__cycles_active.",
        "smsp__inst_executed.sum", "smsp__average_warps_issue_stalled_long_scoreboard", "sm__cycles_elapsed.")

for path in sys.argv[1:]:
    rows, header = [], None
    for fields in csv.reader(l for l in open(path) if l.startswith('"')):
        if fields and fields[0] == "ID":
            header = fields
        elif header and len(fields) == len(header) and fields[0].strip().isdigit():
            rows.append(dict(zip(header, fields)))
    for r in rows:
        plain = {m: v.replace(",", "") for m, v in r.items() if m.startswith(KEEP)}
        metrics = [(m, float(v)) for m, v in plain.items() if v.replace(".", "", 1).isdigit()]
        print(path.split("/")[-1], ", ".join(f"{m} {v:.6g}" for m, v in metrics))
