"""CPU test of step 35's work order (kernels/include/fa/tile_queue.cuh), compiled for the host with
nvcc: TileQueue::tile numbers every (query tile, head) of a launch exactly once, heaviest first
within a section of heads, sections in head order; make_tile_queue's sections fit two fifths of the
L2 and the launch takes the counter only where its last section holds four tiles a CTA. The
expectations are worked out here from the shapes, not read from the header."""

from __future__ import annotations

import math
import subprocess

import pytest

from tests.host_programs import compile_host_program

PROGRAM = r'''
#include <cstdio>
#include "fa/tile_queue.cuh"

// argv: B H H_kv S D causal elem_bytes l2_bytes grid BR(64|128); prints the rule, then every index's tile.
template <int BR>
int dump(const fa::AttnShape& shape, int D, int elem, long long l2, int grid) {
  const auto q = fa::make_tile_queue<BR>(shape, D, elem, l2, grid, 0);
  std::printf("counter %d sections_heads %d total %d\n", q.from_counter, q.section_heads, q.total);
  for (int i = 0; i <= q.total; ++i) {
    const fa::WorkTile t = q.tile(i);
    std::printf("%d %d\n", t.q0, t.bh);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 11) return 2;
  int v[11];
  long long l2 = 0;
  for (int i = 1; i < 11; ++i) v[i] = std::atoi(argv[i]);
  l2 = std::atoll(argv[8]);
  const fa::AttnShape shape{v[1], v[2], v[4], 1.0f, v[6], v[3]};
  return v[10] == 64 ? dump<64>(shape, v[5], v[7], l2, v[9]) : dump<128>(shape, v[5], v[7], l2, v[9]);
}
'''

H100_L2 = 50 * 1024 * 1024  # cudaDevAttrL2CacheSize on an H100 (env.json's l2_bytes)


@pytest.fixture(scope="module")
def queue_program(tmp_path_factory):
    return compile_host_program(tmp_path_factory.mktemp("tile_queue"), "tile_queue", PROGRAM)


def run(exe, B, H, H_kv, S, D, causal, grid, BR, l2=H100_L2, elem=2):
    out = subprocess.run([str(exe), *map(str, (B, H, H_kv, S, D, int(causal), elem, l2, grid, BR))],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    head = out[0].split()
    tiles = [tuple(map(int, line.split())) for line in out[1:]]
    return bool(int(head[1])), int(head[3]), int(head[5]), tiles


def section_heads(B, H, H_kv, S, D, l2=H100_L2, elem=2):
    """K/V heads that fit two fifths of the L2 (at least one), split evenly into sections, times the
    query heads a K/V head serves."""
    kv_heads, fit = B * H_kv, max(1, min(B * H_kv, (l2 * 2 // 5) // (2 * S * D * elem)))
    sections = math.ceil(kv_heads / fit)
    return math.ceil(kv_heads / sections) * (H // H_kv)


@pytest.mark.parametrize("B, H, H_kv, S, D, causal, grid, BR", [
    (1, 64, 8, 8192, 128, True, 132, 128),   # Llama-3-70B: two sections of 32 query heads
    (4, 71, 1, 2048, 64, True, 396, 64),     # Falcon-7B: one section
    (2, 16, 16, 8192, 128, True, 132, 128),  # multi-head, 4 MB a head: seven sections of 5 (the last: 2)
    (3, 6, 2, 300, 64, False, 20, 64),       # odd S, non-causal
])
def test_every_tile_once_heaviest_first_within_a_section(queue_program, B, H, H_kv, S, D, causal, grid, BR):
    counter, heads, total, tiles = run(queue_program, B, H, H_kv, S, D, causal, grid, BR)
    m_blocks = math.ceil(S / BR)
    assert total == m_blocks * B * H and heads == section_heads(B, H, H_kv, S, D)
    assert tiles[-1][0] == -1  # past the end: none
    tiles = tiles[:-1]
    assert sorted(tiles) == sorted((m * BR, bh) for m in range(m_blocks) for bh in range(B * H))
    for i, (q0, bh) in enumerate(tiles):
        section, rank = divmod(i, heads * m_blocks)
        first = section * heads
        size = min(heads, B * H - first)
        assert first <= bh < first + size  # sections in head order
        level = rank // size
        assert q0 == ((m_blocks - 1 - level) if causal else level) * BR  # causal: the heaviest level first
        assert bh == first + rank % size  # heads fastest: the query heads of one K/V head side by side


@pytest.mark.parametrize("B, H, H_kv, S, D, grid, BR, takes_counter", [
    (1, 64, 8, 8192, 128, 132, 128, True),   # last section 32 heads x 64 tiles = 2048 >= 4 x 132
    (1, 32, 8, 8192, 128, 132, 128, True),   # 16 x 64 = 1024 >= 528
    (2, 16, 16, 8192, 128, 132, 128, False),  # 5 heads a section, the last 2 x 64 = 128 < 528
    (4, 16, 16, 4096, 64, 396, 64, False),   # 1 MB a head, 20 fit: four sections of 16, 16 x 64 = 1024 < 1584
    (8, 16, 16, 512, 64, 264, 64, False),    # one section, 128 x 8 = 1024 < 1056
    (4, 71, 1, 2048, 64, 396, 64, True),     # one section, 284 x 32 = 9088
    (4, 32, 4, 1024, 64, 396, 64, True),     # the GPU tests' COUNTER_CASE: one section, 128 x 16 = 2048 >= 1584
])
def test_the_counter_only_where_the_last_section_holds_four_tiles_a_cta(queue_program, B, H, H_kv, S, D, grid, BR,
                                                                        takes_counter):
    counter, heads, total, _ = run(queue_program, B, H, H_kv, S, D, True, grid, BR)
    last = B * H - (math.ceil(B * H / heads) - 1) * heads
    assert (last * math.ceil(S / BR) >= 4 * grid) == takes_counter
    assert counter == takes_counter
