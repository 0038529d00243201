"""Where a kernel's warps stall, instruction by instruction: the CSV of `ncu -i <rep> --page source --csv
--print-source sass` (PC sampling, SourceCounters section) summed by stall reason and by opcode, and the
instructions that hold the most samples of each leading reason.

    python stall_summary.py <source.csv> [top]
"""
import csv, io, re, sys
from collections import defaultdict

path, top = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 12
text = open(path, errors="replace").read()
start = text.find('"')
rows = list(csv.reader(io.StringIO(text[start:])))
head, body = rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]
src = next(i for i, h in enumerate(head) if h.strip().lower() in ("source", "sass"))
addr = next((i for i, h in enumerate(head) if "address" in h.lower()), None)
def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return None
stall_cols = [i for i, h in enumerate(head) if re.search(r"stall|sampl", h, re.I)
              and sum(1 for r in body if num(r[i])) > 0]
print(f"{path}: {len(body)} instructions; columns: {head}")
for i in stall_cols:
    tot = sum(num(r[i]) or 0 for r in body)
    if not tot:
        continue
    by_op = defaultdict(float)
    for r in body:
        op = (r[src].split() or ["?"])[0]
        if op.startswith("@"):
            op = (r[src].split() + ["?"])[1]
        by_op[op.split(".")[0]] += num(r[i]) or 0
    ops = ", ".join(f"{o} {v / tot:.0%}" for o, v in sorted(by_op.items(), key=lambda kv: -kv[1])[:8])
    print(f"\n[{head[i]}] total {tot:.0f}; by opcode: {ops}")
    for r in sorted(body, key=lambda r: -(num(r[i]) or 0))[:top]:
        print(f"   {num(r[i]):8.0f}  {r[addr] if addr is not None else ''}  {r[src][:90]}")
