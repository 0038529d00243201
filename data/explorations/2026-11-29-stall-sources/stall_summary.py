"""Where a kernel's warps stall, instruction by instruction: the CSV of `ncu -i <rep> --page source --csv
--print-source sass` (PC sampling, SourceCounters section; a "Kernel Name" row before each kernel's table) summed
by stall reason and by opcode, with the instructions that hold the most samples of each leading reason.

    python stall_summary.py <source.csv> [top]
"""
import csv, io, re, sys
from collections import defaultdict

path, top = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 12
rows = list(csv.reader(io.StringIO(open(path, errors="replace").read())))
blocks, name = [], None
for i, r in enumerate(rows):
    if r and r[0] == "Kernel Name":
        name = r[1] if len(r) > 1 else "?"
    elif r and r[0] == "Address":
        blocks.append((name, r, []))
    elif blocks and len(r) == len(blocks[-1][1]):
        blocks[-1][2].append(r)


def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


def opcode(sass):
    words = [w for w in sass.split() if not w.startswith("@")]
    return (words or ["?"])[0].split(".")[0]


for name, head, body in blocks:
    c_all = head.index("Warp Stall Sampling (All Samples)")
    reasons = [i for i, h in enumerate(head) if h.startswith("stall_") and "Not Issued" not in h]
    total = sum(num(r[c_all]) for r in body)
    print(f"== {name[:150]}\n   {len(body)} instructions, {total:.0f} samples")
    by_reason = sorted(((sum(num(r[i]) for r in body), head[i]) for i in reasons), reverse=True)
    print("   by reason: " + ", ".join(f"{h[6:]} {v / total:.1%}" for v, h in by_reason if v / total >= 0.005))
    for v, h in by_reason[:6]:
        i = head.index(h)
        by_op = defaultdict(float)
        for r in body:
            by_op[opcode(r[1])] += num(r[i])
        ops = ", ".join(f"{o} {x / v:.0%}" for o, x in sorted(by_op.items(), key=lambda kv: -kv[1])[:6])
        print(f"\n   [{h}] {v / total:.1%} of samples; by opcode: {ops}")
        for r in sorted(body, key=lambda r: -num(r[i]))[:top]:
            print(f"      {num(r[i]):7.0f}  {r[0][-5:]}  {r[1].strip()[:100]}")
    print()
