"""A decode shape's timing cost against its cache from stage.txt (the seconds of its hot and cold loops, as
measure_decode prints them) and inputs.json (each shape's cache): the least-squares line over shapes 2-18 (the
first carries the warm-up), what decode_study.SHAPE_FIXED_COST_BYTES is set from. Usage: python fit.py > fit.txt"""
import json
import re
import statistics
from pathlib import Path

here = Path(__file__).parent
inputs = json.loads((here / "inputs.json").read_text())
cache_gb = {r["shape"]: r["cache_gb"] for r in inputs}
specs = list(dict.fromkeys(r["shape"] for r in inputs))
parts = re.split(r"  decode shape (\d+) of \d+: ", (here / "stage.txt").read_text())[1:]
xs, ys = [], []
for i in range(0, len(parts), 2):
    k = int(parts[i])
    seconds = sum(float(x) for x in re.findall(r"impls in ([0-9.]+) s", parts[i + 1]))
    print(f"{k:2d} {specs[k - 1]:<36} {cache_gb[specs[k - 1]]:6.3f} GB {seconds:4.1f} s")
    if k > 1:
        xs.append(cache_gb[specs[k - 1]])
        ys.append(seconds)
slope, intercept = statistics.linear_regression(xs, ys)
print(f"fit over shapes 2-{len(xs) + 1}: {intercept:.2f} s a shape + {slope:.3f} s a GB; "
      f"fixed cost {intercept / slope:.1f} GB of cache")
