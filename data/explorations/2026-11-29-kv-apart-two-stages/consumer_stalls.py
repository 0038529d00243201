"""The consumer warps' stall samples of step 36 and FA3 at (1, 16, 16384, 128), full and causal, re-read from
../2026-11-28-stall-sampling-sleeping-waits/call_stalls/sass_source.tgz (ncu SourceCounters; extract it into the
current folder first): the samples between each kernel's first and last HGMMA (the consumers' loop, about 90 % of all
samples) by stall reason, then the instructions with the most samples of the reasons where the two differ.

    tar xzf ../2026-11-28-stall-sampling-sleeping-waits/call_stalls/sass_source.tgz && python consumer_stalls.py
"""
import collections
import csv

TAGS = ["uniform_descriptors", "flash_attn3", "uniform_descriptors_causal", "flash_attn3_causal"]
REASONS = ["stall_math", "stall_barrier", "stall_branch_resolving", "stall_long_sb", "stall_short_sb"]


def load(path):
    rows = list(csv.reader(open(path)))
    hdr = rows[1]
    return hdr, [dict(zip(hdr, r)) for r in rows[2:] if len(r) == len(hdr)]


def samples(r, col="Warp Stall Sampling (All Samples)"):
    return int(r[col] or 0)


for tag in TAGS:
    hdr, d = load(f"{tag}_sass.csv")
    cols = [c for c in hdr if c.startswith("stall_") and "Not Issued" not in c]
    hgmma = [i for i, r in enumerate(d) if "HGMMA" in r["Source"]]
    loop = d[min(hgmma):max(hgmma) + 1]
    total, in_loop = sum(samples(r) for r in d), sum(samples(r) for r in loop)
    by_reason = collections.Counter({c: sum(samples(r, c) for r in loop) for c in cols})
    print(f"== {tag}: the consumers' span holds {in_loop / total * 100:.1f} % of the samples; of them:")
    print("   " + ", ".join(f"{c[6:]} {v / in_loop * 100:.1f} %" for c, v in by_reason.most_common(10)))
    for c in REASONS:
        top = sorted(loop, key=lambda r: -samples(r, c))[:3]
        print(f"   {c[6:]:>17}: " + "; ".join(f"{r['Source'].strip()[:44]} {samples(r, c) / in_loop * 100:.2f} %"
                                              for r in top))
