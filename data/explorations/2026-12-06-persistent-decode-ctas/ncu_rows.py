"""Every kernel of an ncu --csv --page raw capture, one line each: name, time, instructions, DRAM %, bytes, grid."""
import csv
import sys

rows = list(csv.DictReader(line for line in open(sys.argv[1]) if line.startswith('"')))[1:]
cols = ("gpu__time_duration.sum", "smsp__inst_executed.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "launch__grid_size", "launch__block_size",
        "launch__registers_per_thread", "sm__warps_active.avg.pct_of_peak_sustained_active")
print("kernel | " + " | ".join(c.split("__")[1] if "__" in c else c for c in cols))
for r in rows:
    print(r["Kernel Name"][:70] + " | " + " | ".join(r.get(c, "") for c in cols))
