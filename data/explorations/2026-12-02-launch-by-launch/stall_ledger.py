"""Call 6's ledger: Nsight Compute's PC samples (`--page source --print-source sass --csv`, one block a kernel)
joined to the SASS instructions. Per kernel: the samples by stall reason, and by reason the instructions that hold
the most samples, with their mnemonics.

    tar xJf call6/source_pages.tar.xz -C /tmp && python stall_ledger.py /tmp/src_<shape>.csv [top]
"""
import csv
import re
import sys
from collections import Counter, defaultdict


def kernels(path):
    """(kernel name, [row dicts]) for each block of the source page."""
    name, header, rows, out = None, None, [], []
    for fields in csv.reader(open(path)):
        if fields and fields[0] == "Kernel Name":
            if name:
                out.append((name, rows))
            name, header, rows = fields[1], None, []
        elif fields and fields[0] == "Address":
            header = fields
        elif header and len(fields) == len(header):
            rows.append(dict(zip(header, fields)))
    if name:
        out.append((name, rows))
    return out


def mnemonic(source):
    text = re.sub(r"^@!?U?P\w+\s+", "", source.strip())
    return text.split()[0] if text else "?"


def number(v):
    try:
        return float(v.replace(",", ""))
    except ValueError:
        return 0.0


def ledger(name, rows, top):
    reasons = [c for c in rows[0] if c.startswith("stall_") and "Not Issued" not in c]
    total = sum(number(r["Warp Stall Sampling (All Samples)"]) for r in rows)
    short = "FA3" if "flash" in name.lower() or "cutlass" in name.lower() else "step 53"
    print(f"== {short}: {name[:110]}")
    print(f"   samples {total:.0f}, instructions {len(rows)}")
    by_reason = Counter({c: sum(number(r[c]) for r in rows) for c in reasons})
    for reason, n in by_reason.most_common():
        if n / total < 0.01:
            break
        by_op = defaultdict(float)
        for r in rows:
            by_op[mnemonic(r["Source"])] += number(r[reason])
        ops = ", ".join(f"{op} {v / total:.1%}" for op, v in sorted(by_op.items(), key=lambda x: -x[1])[:5] if v)
        print(f"   {reason:24s} {n / total:6.1%}  {ops}")
    hot = sorted(rows, key=lambda r: -number(r["Warp Stall Sampling (All Samples)"]))[:top]
    print("   hottest instructions (share of samples, the top two reasons):")
    for r in hot:
        n = number(r["Warp Stall Sampling (All Samples)"])
        top2 = sorted(((number(r[c]), c[6:]) for c in reasons), reverse=True)[:2]
        why = ", ".join(f"{c} {v / n:.0%}" for v, c in top2 if v)
        print(f"     {n / total:5.1%}  {r['Source'].strip()[:60]:60s} {why}")


if __name__ == "__main__":
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    for name, rows in kernels(sys.argv[1]):
        ledger(name, rows, top)
