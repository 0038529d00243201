"""Call 3's consumer stall samples of step 50 and FA3 at (4, 16, 4096, 128) causal: the samples between each kernel's
first and last HGMMA by stall reason (as ../2026-11-29-kv-apart-two-stages/consumer_stalls.py counts them), then
every instruction holding more than 1 % of all samples as barrier stalls, with the eight instructions before it.

    tar xzf call3/stalls_causal.tgz && python barrier_stalls.py
"""
import collections
import csv

COL = "Warp Stall Sampling (All Samples)"


def load(tag):
    rows = list(csv.reader(open(f"{tag}_sass.csv")))
    hdr = rows[1]
    return hdr, [dict(zip(hdr, r)) for r in rows[2:] if len(r) == len(hdr)]


def n(r, col=COL):
    return int(r[col] or 0)


for tag in ["pipeline_state_d128_causal", "flash_attn3_causal"]:
    hdr, d = load(tag)
    total = sum(n(r) for r in d)
    hgmma = [i for i, r in enumerate(d) if "HGMMA" in r["Source"]]
    loop = d[min(hgmma):max(hgmma) + 1]
    in_loop = sum(n(r) for r in loop)
    cols = [c for c in hdr if c.startswith("stall_") and "Not Issued" not in c]
    by_reason = collections.Counter({c: sum(n(r, c) for r in loop) for c in cols})
    print(f"== {tag}: {total} samples, the consumers' span {in_loop / total * 100:.1f} %; of the span:")
    print("   " + ", ".join(f"{c[6:]} {v / in_loop * 100:.1f} %" for c, v in by_reason.most_common(10)))
    for i, r in enumerate(d):
        if n(r, "stall_barrier") > 0.01 * total:
            print(f"   barrier stalls at line {i}, {n(r, 'stall_barrier') / total * 100:.2f} % of all samples:")
            for j in range(max(0, i - 8), i + 1):
                print(f"     {n(d[j]) / total * 100:5.2f} %  {d[j]['Source'].strip()[:72]}")
