"""A call's profile as the README's table: per shape (in the order the call profiled them), step 70's and step 72's main
kernel under Nsight Compute, one cold call each.

    python ncu_table.py call2/ncu2.csv                                          # ncu2.sh's three shapes
    python ncu_table.py call4/ncu4.csv 64,32,8,128,1024,bf16 64,64,8,128,1024,bf16  # call4.sh's two
"""
import csv
import sys

SHAPES = tuple(sys.argv[2:]) or ("64,71,1,64,1024,bf16", "8,32,8,128,8192,bf16", "64,32,8,128,1024,bf16")
COLUMNS = (("gpu__time_duration.sum", "time (ns)"), ("smsp__inst_executed.sum", "warp instructions"),
           ("sm__cycles_elapsed.max", "cycles (busiest SM)"), ("launch__grid_size", "CTAs"),
           ("launch__registers_per_thread", "registers"), ("smsp__inst_executed_op_global_ld.sum", "global loads"),
           ("smsp__inst_executed_op_shared_ld.sum", "shared loads"), ("smsp__inst_executed_op_shared_st.sum",
                                                                       "shared stores"))


def number(text: str) -> float:
    return float(text.replace(",", ""))


rows = list(csv.DictReader(line for line in open(sys.argv[1]) if line.startswith('"')))[1:]  # [0]: the units
main = [r for r in rows if "decode_fwd" in r["Kernel Name"]]  # each call's main kernel, step 70 then step 72
if len(main) != 2 * len(SHAPES):
    sys.exit(f"{len(main)} main kernels for {len(SHAPES)} shapes: name the shapes the call profiled, in its order")
print("| shape | step | " + " | ".join(title for _, title in COLUMNS) + " |")
print("|---|---|" + "---:|" * len(COLUMNS))
for i, shape in enumerate(SHAPES):
    for step, r in zip(("70", "72"), main[2 * i:2 * i + 2]):
        print(f"| {shape} | {step} | " + " | ".join(f"{number(r[k]):,.0f}" for k, _ in COLUMNS) + " |")
    a, b = (number(r["smsp__inst_executed.sum"]) for r in main[2 * i:2 * i + 2])
    print(f"| {shape} | 72 / 70 | | {b / a:.3f}x | | | | | | |")
