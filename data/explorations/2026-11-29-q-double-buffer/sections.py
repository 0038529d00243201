"""Without a GPU: for call 2's causal D = 64 shapes on the H200 (132 SMs, 60 MB of L2: the run's env.json), how full
the static list's last round of heavy-light pairs is (step 51's rule), how many MB of K/V the launch reads, the
sections step 35's queue makes for the three-warpgroup tile (192-row tiles, one CTA an SM: fa/tile_queue.cuh's
make_tile_queue) and whether it takes the counter (the last section must hold 4 tiles a CTA), beside call 2's
speedups over step 51 (call2/time.txt, paired per-round ratios: qn24, the counter over one section, and st, the static
list; > 1: faster than step 51)."""
import math
import re

SMS, BR, L2, TILES_PER_CTA = 132, 192, 62914560, 4


def queue(b, h, hkv, s, d=64, elem=2):
    kv_heads, group = b * hkv, h // hkv
    fit = L2 * 2 // 5 // (2 * s * d * elem)
    sections = math.ceil(kv_heads / max(1, min(fit, kv_heads)))
    section_heads = math.ceil(kv_heads / sections) * group
    m_blocks, heads = math.ceil(s / BR), b * h
    last = heads - (math.ceil(heads / section_heads) - 1) * section_heads
    grid = min(m_blocks * heads, SMS)
    return sections, last * m_blocks, last * m_blocks >= TILES_PER_CTA * grid


def ratio(line, label):
    m = re.search(rf"st24/{label} ([0-9.]+)", line)
    return float(m.group(1)) if m else None


print(f"{'shape':32} {'fill':>5} {'K/V MB':>7} {'sections':>8} {'last':>5} {'counter?':>8}  qn24 speedup  st speedup")
for line in open("call2/time.txt"):
    m = re.match(r"(\S+)\s+st24=", line)
    if not m:
        continue
    f = m.group(1).split(",")
    b, h, s = (int(x) for x in f[:3])
    hkv = next((int(x[2:]) for x in f if x.startswith("kv")), h)
    pairs = math.ceil(math.ceil(s / BR) / 2) * b * h
    per_cta = pairs / min(pairs, SMS)
    fill = per_cta / math.ceil(per_cta)
    kv_mb = 2 * b * hkv * s * 64 * 2 / 2**20
    sections, last, counter = queue(b, h, hkv, s)
    # time.txt's ratios are st24's time over each configuration's: X's speedup over s51 = (st24/X) / (st24/s51)
    qn, st, s51 = ratio(line, "qn24"), ratio(line, "st"), ratio(line, "s51")
    print(f"{m.group(1):32} {fill:5.2f} {kv_mb:7.0f} {sections:8d} {last:5d} {str(counter):>8}  {qn / s51:.3f}        {st / s51:.3f}")
