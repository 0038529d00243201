"""Calls 3 and 4 side by side (no GPU): per S = 4096 causal D = 128 row, the call's K/V, which schedule m8k takes at
4096-8191 keys on an H100 (fa::make_tile_queue's sections of two fifths of a 50 MB L2 and the counter from 4 tiles a
CTA in the last section, else step 27's static pairs; s69: FlashAttention-3's 32 MB sections and the counter from 3
tiles a CTA), and m8k's speed over s69's and over FA3's in each call."""
import pathlib
import re

HERE = pathlib.Path(__file__).parent
# call4.sh names its output time4.txt (the first call 4, run inline before it was a file, time.txt)
CALLS = {"a3": "call3/time.txt", "b3": "call3-h100b/time.txt", "b4": "call4/time.txt", "b4'": "call4-h100b/time4.txt"}
L2, SMS, BR = 50 << 20, 132, 128


def ceil_div(a, b):
    return -(-a // b)


def schedule(B, H, H_kv, S, D, section_bytes, tiles_per_cta, elem=2):
    """make_tile_queue's choice for a launch of 132 CTAs (one an SM): the counter where the last section holds
    tiles_per_cta tiles a CTA, else step 27's static heavy-light pairs."""
    kv_heads, group = B * H_kv, H // H_kv
    fit = max(1, min(kv_heads, section_bytes // (2 * S * D * elem)))
    sections = ceil_div(kv_heads, fit)
    section_heads = ceil_div(kv_heads, sections) * group
    m_blocks, heads = ceil_div(S, BR), B * H
    last = heads - (ceil_div(heads, section_heads) - 1) * section_heads
    if last * m_blocks >= tiles_per_cta * SMS:
        return f"counter, {section_heads} heads"
    return f"static, {heads * m_blocks // 2 / SMS:.1f} pairs"


rows = {}
for call, path in CALLS.items():
    for line in open(HERE / path):
        m = re.search(r"s69/m8k ([0-9.]+) .*s69/fa3 ([0-9.]+)", line)
        if m:
            rows.setdefault(line.split()[0], {})[call] = (float(m.group(1)), float(m.group(1)) / float(m.group(2)))

print(f"{'row':32s} {'K/V MB':>6s}  {'m8k | s69 (H100, 132 CTAs)':44s} " + " ".join(f"{c + ' /s69':>8s}" for c in CALLS)
      + "  " + " ".join(f"{c + ' /FA3':>8s}" for c in CALLS))
for row, by_call in sorted(rows.items(), key=lambda kv: [int(x) for x in kv[0].split(",")[:4]]):
    B, H, S, D = (int(x) for x in row.split(",")[:4])
    kv = next((int(t[2:]) for t in row.split(",") if t.startswith("kv")), H)
    mb = 2 * B * kv * S * D * 2 >> 20
    sched = schedule(B, H, kv, S, D, L2 * 2 // 5, 4) + " | " + schedule(B, H, kv, S, D, 32 << 20, 3)
    cells = [f"{by_call[c][0]:8.4f}" if c in by_call else f"{'':8s}" for c in CALLS]
    fa3 = [f"{by_call[c][1]:8.4f}" if c in by_call else f"{'':8s}" for c in CALLS]
    print(f"{row:32s} {mb:6d}  {sched:44s} " + " ".join(cells) + "  " + " ".join(fa3))
