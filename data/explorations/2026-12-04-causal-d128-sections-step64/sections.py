"""The sections and the schedule (static pairs or the counter) that make_tile_queue gives the causal D = 128 rows of
call1.sh on an H200 (132 SMs, 60 MB of L2; BR 128, grid min(tiles, 132)), at step 64 and under explore.patch's
configurations: the header's host code compiled with nvcc for the CPU (needs explore.patch applied).

    PYTHONPATH=. python data/explorations/2026-12-04-causal-d128-sections-step64/sections.py > .../sections.txt
"""
import subprocess
import tempfile
from pathlib import Path

from tests.host_programs import compile_host_program

SOURCE = r'''
#include <cstdio>
#include <cstdlib>
#include "fa/tile_queue.cuh"
int main(int argc, char** argv) {
  const int B = std::atoi(argv[1]), H = std::atoi(argv[2]), S = std::atoi(argv[3]), H_kv = std::atoi(argv[4]);
  const int elem = std::atoi(argv[5]);
  const fa::AttnShape shape{B, H, S, 1.0f, 1, H_kv};
  const long long tiles = static_cast<long long>((S + 127) / 128) * B * H;
  const int grid = tiles < 132 ? static_cast<int>(tiles) : 132;
  const auto q = fa::make_tile_queue<128>(shape, 128, elem, 60LL << 20, grid, 0);
  const int sections = (q.heads + q.section_heads - 1) / q.section_heads;
  const int last = q.heads - (sections - 1) * q.section_heads;
  std::printf("%d sections of %d heads (last %d: %d tiles, %.2f a CTA), %s\n", sections, q.section_heads, last,
              last * q.m_blocks, double(last * q.m_blocks) / grid, q.from_counter ? "counter" : "static pairs");
  return 0;
}
'''
ROWS = [(4, 16, 4096, 16, 2), (2, 16, 8192, 16, 2), (1, 16, 16384, 16, 2), (1, 16, 8192, 16, 2), (8, 16, 4096, 16, 2),
        (16, 16, 1024, 16, 2), (1, 32, 8192, 8, 2), (1, 64, 8192, 8, 2), (1, 28, 8192, 4, 2)]
CONFIGS = {"s64": [], "r": ["-DFA_EXP_CAUSAL_MIN_S_D128=4096"],
           "r48": ["-DFA_EXP_CAUSAL_MIN_S_D128=4096", "-DFA_EXP_SECTION_MB_D128=48"],
           "r64": ["-DFA_EXP_CAUSAL_MIN_S_D128=4096", "-DFA_EXP_SECTION_MB_D128=64"]}

if "FA_EXP_CAUSAL_MIN_S_D128" not in (Path(__file__).parents[3] / "kernels/include/fa/tile_queue.cuh").read_text():
    raise SystemExit("apply explore.patch first (git apply data/explorations/2026-12-04-causal-d128-sections-step64/"
                     "explore.patch): without it the configurations' defines change nothing")
with tempfile.TemporaryDirectory() as tmp:
    for label, defines in CONFIGS.items():
        src = SOURCE.replace("#include <cstdio>", "\n".join(f"#define {d[2:].replace('=', ' ')}" for d in defines)
                             + "\n#include <cstdio>")
        folder = Path(tmp) / label
        folder.mkdir()
        exe = compile_host_program(folder, "sections", src)
        for B, H, S, H_kv, elem in ROWS:
            out = subprocess.run([str(exe), *map(str, (B, H, S, H_kv, elem))], check=True, capture_output=True,
                                 text=True).stdout.strip()
            print(f"{label:4s} ({B}, {H}, {S}, 128, causal, {H_kv} K/V heads): {out}")
