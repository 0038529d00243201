"""The correctness stage's seconds per arm (A: alone; B: beside the flex_attention warm-up) in each
call of ab_call.sh, from call*/arms.txt: each arm's runs, their mean, and B's mean less A's.

    python data/explorations/2026-11-26-correctness-contention/summarize.py
"""

from pathlib import Path
from statistics import mean

HERE = Path(__file__).resolve().parent
for call in sorted(HERE.glob("call*/arms.txt")):
    arms = {"A": [], "B": []}
    for line in call.read_text().splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[1] in arms:
            arms[parts[1]].append(float(parts[3]))
    spread = max(max(v) - min(v) for v in arms.values())
    print(f"{call.parent.name}: A {arms['A']} mean {mean(arms['A']):.1f} s; B {arms['B']} mean {mean(arms['B']):.1f} s; "
          f"B - A {mean(arms['B']) - mean(arms['A']):+.1f} s; largest spread within an arm {spread:.1f} s")
