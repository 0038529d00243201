"""Call 2's causal D = 64 shapes: how full the last round of step 27's static heavy-light pairs is for the
three-warpgroup tile (192 query rows; pairs a head = ceil(m_blocks / 2); one CTA an SM on 132 SMs), beside the
measured ratios (call2/time.txt: step 50's time over the configuration's, st = static pairs, q1 = the counter)."""
import math
import re

SMS, BR = 132, 192
text = open("call2/time.txt").read()
print(f"{'shape':34} {'pairs':>6} {'a CTA':>6} {'fill':>5}  st      q1")
for line in text.splitlines():
    m = re.match(r"(\S+)\s+s50=", line)
    if not m or "causal" not in m.group(1):
        continue
    b, h, s = (int(x) for x in m.group(1).split(",")[:3])
    pairs = math.ceil(math.ceil(s / BR) / 2) * b * h
    per_cta = pairs / min(pairs, SMS)
    fill = per_cta / math.ceil(per_cta)
    st = re.search(r"s50/st1 ([0-9.]+)", line).group(1)
    q1 = re.search(r"s50/q1 ([0-9.]+)", line).group(1)
    print(f"{m.group(1):34} {pairs:6d} {per_cta:6.2f} {fill:5.2f}  {st}  {q1}")
