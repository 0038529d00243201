"""Each captured row's gap, step 62 over FA3, in SM cycles: the loop (mean active cycles an SM) and the schedule (the
busiest SM's active cycles over the mean, step 62's over FA3's); their product is about the elapsed cycles' ratio.
Reads call1/compare.txt (../2026-12-02-launch-by-launch/compare.py's output: step, peer, ratio a metric).

    python split.py call1/compare.txt > call1/split.txt
"""
import collections
import sys

rows = collections.defaultdict(dict)
row = None
for line in open(sys.argv[1]):
    if line.startswith("== "):
        row = line.split()[1].removeprefix("ncu_").removesuffix(".csv:").replace("_", ",")
        continue
    parts = line.split()
    if row and len(parts) == 4 and parts[0].startswith(("sm__cycles", "gpu__time_duration.sum")):
        rows[row][parts[0]] = (float(parts[1]), float(parts[2]))

print(f"{'row':32s} {'ns':>6s} {'elapsed':>8s} {'loop':>6s} {'max/mean s62':>12s} {'max/mean FA3':>12s} {'schedule':>8s}")
for row, m in rows.items():
    ns, el = m["gpu__time_duration.sum"], m["sm__cycles_elapsed.max"]
    avg, mx = m["sm__cycles_active.avg"], m["sm__cycles_active.max"]
    s62, fa3 = mx[0] / avg[0], mx[1] / avg[1]
    print(f"{row:32s} {ns[0] / ns[1]:6.3f} {el[0] / el[1]:8.3f} {avg[0] / avg[1]:6.3f} {s62:12.3f} {fa3:12.3f} "
          f"{s62 / fa3:8.3f}")
