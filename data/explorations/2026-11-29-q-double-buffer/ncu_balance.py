"""Per-SM balance of an ncu --csv --metrics run (call1.sh, call2.sh): the SMs' mean and least active cycles over the
busiest one's, the launch's elapsed cycles, tensor-pipe shares where measured, warp instructions.

    python ncu_balance.py ncu_*.csv
"""
import csv, io, os, sys
for f in sorted(sys.argv[1:]):
    rows = [r for r in csv.reader(io.StringIO("".join(l for l in open(f) if l.startswith('"')))) if len(r) > 5]
    if not rows: print(os.path.basename(f), "no rows"); continue
    h = rows[0]; i_n, i_v = h.index("Metric Name"), h.index("Metric Value"); i_k = h.index("Kernel Name")
    vals = {}
    for r in rows[1:]:
        vals.setdefault(r[i_k][:40], {})[r[i_n]] = r[i_v]
    for k, v in vals.items():
        a, mn, mx = (float(v.get(f"sm__cycles_active.{x}", "nan").replace(",", "")) for x in ("avg", "min", "max"))
        print(f"{os.path.basename(f):14s} {k:40s} t={v.get('gpu__time_duration.sum')} active avg/max {a / mx:.3f} min/max {mn / mx:.3f}"
              f" elapsed {v.get('sm__cycles_elapsed.max')} gmma avg {v.get('sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed')}"
              f" max {v.get('sm__pipe_tensor_op_gmma_cycles_active.max.pct_of_peak_sustained_elapsed')} inst {v.get('smsp__inst_executed.sum')}")
