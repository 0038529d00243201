"""The decode grid (lab.measure.decode_check.decode_grid) on each decode step, nothing timed: what
compute-sanitizer runs under (memcheck, racecheck, synccheck, initcheck). Exit 1 where a case fails.

    compute-sanitizer --tool memcheck python data/explorations/2026-11-28-decode-first-steps/grid_only.py [step,step]
"""

import sys

import torch

from lab import variants
from lab.measure.decode_check import check_decode_case, decode_grid

failed = 0
for name in sys.argv[1].split(",") if len(sys.argv) > 1 else variants.names(problem="decode"):
    fn = variants.load(name)
    for i, shape in enumerate(decode_grid()):
        r = check_decode_case(name, lambda q, k, v, lens, table, o, fn=fn: fn(q, k, v, lens, table, out=o), shape, i)
        failed += not r["passed"]
        if not r["passed"]:
            print("FAIL", name, shape.id, r)
torch.cuda.synchronize()
print("grid cases failed:", failed)
sys.exit(1 if failed else 0)
