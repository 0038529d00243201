"""Warp-stall samples by the class of the instruction they were taken at (lab.kernels.sass_mix's classes),
and the instructions executed by class, for each kernel: where a warp's time goes. Reads TAG_sass.csv (ncu
--page source --csv --print-source sass) from the current folder: extract call_stalls/sass_source.tgz there.

    python by_class.py uniform_descriptors flash_attn3 > by_class.txt
"""
import csv, sys, collections
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root
from lab.kernels.sass_mix import classify, CLASS_NAMES
def load(path):
    rows = list(csv.reader(open(path)))
    hdr = rows[1]
    return [dict(zip(hdr, r)) for r in rows[2:] if len(r) == len(hdr)]
def opcode(src):
    parts = src.strip().split()
    if parts and parts[0].startswith("@"): parts = parts[1:]
    return parts[0] if parts else "?"
KEYS = {"uniform_descriptors": 128, "flash_attn3": 176}
tables = {}
for tag in sys.argv[1:]:
    d = load(f"{tag}_sass.csv")
    S = sum(int(r["Warp Stall Sampling (All Samples)"] or 0) for r in d)
    by = collections.Counter(); ex = collections.Counter()
    for r in d:
        c = classify(opcode(r["Source"]))
        by[c] += int(r["Warp Stall Sampling (All Samples)"] or 0); ex[c] += int(r["Instructions Executed"] or 0)
    tables[tag] = (S, by, ex)
names = list(tables)
print("class | " + " | ".join(f"{n} samples % | {n} executed M" for n in names))
for c in CLASS_NAMES:
    print(f"{c} | " + " | ".join(f"{tables[n][1][c] / tables[n][0] * 100:.1f} | {tables[n][2][c] / 1e6:.1f}" for n in names))
print("total samples | " + " | ".join(f"{tables[n][0]} | {sum(tables[n][2].values()) / 1e6:.1f}" for n in names))
