"""The calls' Nsight Compute records (ncu_*.csv) a kernel a line: time (ns), grid, block, registers, DRAM bytes read and
throughput (% of peak), L2 hit rate, warps active (% of peak).

    python ncu_table.py call1/ncu_*.csv call2/ncu_*.csv > ncu.txt
"""
import csv
import sys

SHORT = {"gpu__time_duration.sum": "ns", "launch__grid_size": "grid", "launch__block_size": "block",
         "launch__registers_per_thread": "regs", "dram__bytes_read.sum": "dram_read",
         "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_pct", "lts__t_sector_hit_rate.pct": "l2_hit",
         "sm__warps_active.avg.pct_of_peak_sustained_active": "warps_active"}
for path in sys.argv[1:]:
    lines = [x for x in open(path) if not x.startswith("==")]
    kernels = {}
    for row in csv.DictReader(lines):
        kernels.setdefault((row["ID"], row["Kernel Name"].split("(")[0][:48]), {})[SHORT[row["Metric Name"]]] = \
            row["Metric Value"]
    for (_, name), m in kernels.items():
        print(f"{path:<34} {name:<48} " + " ".join(f"{k}={m.get(k, '')}" for k in SHORT.values()))
