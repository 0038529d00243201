"""Each step over its parent from call 1's paired rounds (time_6085.json: a sample of every configuration a round):
step 68 over step 67, step 69 over step 68 and step 69 over FA3 (fa3/s69: FA3's time over step 69's), the geometric
mean of the per-round ratios with a 95 % t interval, as exp.py's summary gives them against the first configuration.

    python data/checks/2026-12-05-step68-69-draft/call1/step_ratios.py > .../step_ratios.txt"""
import json
import math
from pathlib import Path

from scipy import stats

HERE = Path(__file__).resolve().parent
for row in json.loads((HERE / "time_6085.json").read_text()):
    s = row["samples"]
    cells = []
    for parent, step in (("s67", "s68"), ("s68", "s69"), ("fa3", "s69")):
        logs = [math.log(a / b) for a, b in zip(s[parent], s[step])]
        n = len(logs)
        mean = sum(logs) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1))
        h = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
        cells.append(f"{parent}/{step} {math.exp(mean):.4f} [{math.exp(mean - h):.4f}, {math.exp(mean + h):.4f}]")
    print(f"{row['shape']:<32} " + " | ".join(cells) + f" (n={n})")
