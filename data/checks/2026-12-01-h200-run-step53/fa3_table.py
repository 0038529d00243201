"""The sm_90a end against FA3 and cuDNN at issue 46's shapes, hot and (where the run has it) sustained, from a
recorded run (paired speedups with 95 % intervals over its replicates, lab.report.load.RunData.speedup, as the
report computes them). > 1: the end faster.

    PYTHONPATH=. python data/checks/2026-12-01-h200-run-step53/fa3_table.py 20261201T211513Z-59b3f77 [kernel]
"""
import sys

from lab.kernels.shape import Shape
from lab.measure import records
from lab.report.load import RunData

SHAPES = ["4,16,4096,64", "4,16,4096,64,causal", "16,16,1024,128", "16,16,1024,128,causal", "4,16,4096,128",
          "4,16,4096,128,causal", "2,16,8192,128", "2,16,8192,128,causal", "1,16,16384,128", "1,16,16384,128,causal",
          "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16", "4,12,2048,64,causal,bf16",
          "4,71,2048,64,causal,kv1,bf16", "1,32,8192,128,causal,kv8,bf16", "1,64,8192,128,causal,kv8,bf16",
          "1,28,8192,128,causal,kv4,bf16", "4,32,2048,128,causal,kv8,bf16", "4,64,2048,128,causal,kv8,bf16",
          "4,28,2048,128,causal,kv4,bf16"]


def main() -> None:
    """The table (a function, so that the worker processes lab.report's parallel map starts can import this file)."""
    data = RunData(records.RunRecord.open(sys.argv[1]))
    end = sys.argv[2] if len(sys.argv) > 2 else "two_stages_three_wgs_d64"  # the sm_90a end of the run
    print(f"{end} against flash_attn3 and sdpa_cudnn, run {sys.argv[1]}")
    print(f"{'shape':34s} {'mode':10s} {'vs flash_attn3':>26s} {'vs sdpa_cudnn':>26s}")
    for spec in SHAPES:
        s = Shape.parse(spec)
        for mode in ("hot", "sustained"):
            cells = []
            for peer in ("flash_attn3", "sdpa_cudnn"):
                ci = data.speedup(end, peer, s, mode)
                cells.append(f"{ci.ratio:.3f}x [{ci.lo:.3f}, {ci.hi:.3f}]" if ci else "-")
            if cells != ["-", "-"]:
                print(f"{spec:34s} {mode:10s} {cells[0]:>26s} {cells[1]:>26s}")


if __name__ == "__main__":
    main()
