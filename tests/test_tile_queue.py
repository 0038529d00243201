"""CPU test of step 35's work order (kernels/include/fa/tile_queue.cuh), compiled for the host with
nvcc: TileQueue::tile numbers every (query tile, head) of a launch exactly once, heaviest first
within a section of heads, sections in head order; make_tile_queue's sections fit two fifths of the
L2 and the launch takes the counter only where its last section holds four tiles a CTA (step 65: long causal D = 128
calls 32 MB sections and three). The
expectations are worked out here from the shapes, not read from the header."""

from __future__ import annotations

import math
import subprocess

import pytest

from tests.host_programs import compile_host_program
from tests.queue_sections import last_section_heads, section_heads, takes_counter

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


@pytest.mark.parametrize("B, H, H_kv, S, D, causal, grid, BR", [
    (1, 64, 8, 8192, 128, True, 132, 128),   # Llama-3-70B: two sections of 32 query heads
    (4, 71, 1, 2048, 64, True, 396, 64),     # Falcon-7B: one section
    (2, 16, 16, 8192, 128, True, 132, 128),  # multi-head, 4 MB a head: seven sections of 5 (the last: 2)
    (3, 6, 2, 300, 64, False, 20, 64),       # odd S, non-causal
])
def test_every_tile_once_heaviest_first_within_a_section(queue_program, B, H, H_kv, S, D, causal, grid, BR):
    counter, heads, total, tiles = run(queue_program, B, H, H_kv, S, D, causal, grid, BR)
    m_blocks = math.ceil(S / BR)
    assert total == m_blocks * B * H and heads == section_heads(B, H, H_kv, S, D, H100_L2 * 2 // 5)
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
    last = last_section_heads(B, H, heads)
    assert (last * math.ceil(S / BR) >= 4 * grid) == takes_counter
    assert counter == takes_counter


PER_CTA_PROGRAM = r'''
#include <cstdio>
#include <cstdlib>
#include "fa/tile_queue.cuh"

// argv: B H S D causal l2 grid tiles_per_cta one_section; prints whether the launch takes the counter (BR 192: the
// three-warpgroup D = 64 tile's rows).
int main(int argc, char** argv) {
  if (argc != 10) return 2;
  const int H = std::atoi(argv[2]);
  const fa::AttnShape shape{std::atoi(argv[1]), H, std::atoi(argv[3]), 1.0f, std::atoi(argv[5]), H};
  const auto q = fa::make_tile_queue<192>(shape, std::atoi(argv[4]), 2, std::atoll(argv[6]), std::atoi(argv[7]), 0,
                                          std::atoi(argv[9]) != 0, std::atoi(argv[8]));
  std::printf("%d\n", q.from_counter);
  return 0;
}
'''


@pytest.mark.parametrize("B, H, S, tiles_per_cta, one_section, takes_counter", [
    (1, 12, 8192, 4, True, False),  # GPT-2 on the three-warpgroup tile: 43 x 12 = 516 tiles < 4 x 132
    (1, 12, 8192, 2, True, True),   # step 63's count: 516 >= 2 x 132
    (1, 12, 4096, 2, True, True),   # 22 x 12 = 264 = 2 x 132
    (1, 11, 4096, 2, True, False),  # 242 < 264
    (1, 12, 8192, 2, False, True),  # 2 MB a head, 12 fit two fifths of 60 MB: one section anyway
    (1, 12, 16384, 2, False, True),  # 4 MB a head, 6 fit: two sections of 6, the last 6 x 86 = 516 >= 264
    (1, 12, 16384, 4, False, False),  # ... < 528
])
def test_the_counter_from_the_tiles_a_cta_the_launch_asks(tmp_path_factory, B, H, S, tiles_per_cta, one_section,
                                                          takes_counter):
    """make_tile_queue's tiles_per_cta (step 63: the counter's three-warpgroup tile from as many tiles a CTA as its
    rule asks, 2): the counter where the last section's tiles are at least tiles_per_cta x grid, the sections as
    tests/queue_sections.py works them out (one_section: every head)."""
    exe = compile_host_program(tmp_path_factory.mktemp("per_cta"), "per_cta", PER_CTA_PROGRAM)
    out = subprocess.run([str(exe), *map(str, (B, H, S, 64, 1, 60 * 1024 * 1024, 132, tiles_per_cta,
                                                int(one_section)))], check=True, capture_output=True, text=True)
    heads = B * H if one_section else section_heads(B, H, H, S, 64, 60 * 1024 * 1024 * 2 // 5)
    last = last_section_heads(B, H, heads)
    assert (last * math.ceil(S / 192) >= tiles_per_cta * 132) is takes_counter  # the expectation, worked out here
    assert out.stdout.split() == [str(int(takes_counter))]


MIRROR_PROGRAM = r'''
#include <cstdio>
#include <cstdlib>
#include "fa/tile_queue.cuh"

// argv: B H S grid tiles_per_cta mirror_under; prints the launch's from_counter, then each CTA's first and second
// tile as (q0 / 192, head) pairs, the second by TileQueue::mirrored_second (-1 -1: none). One section (BR 192).
int main(int argc, char** argv) {
  if (argc != 7) return 2;
  const int H = std::atoi(argv[2]), grid = std::atoi(argv[4]);
  const fa::AttnShape shape{std::atoi(argv[1]), H, std::atoi(argv[3]), 1.0f, 1, H};
  const auto q = fa::make_tile_queue<192>(shape, 64, 2, 60LL << 20, grid, 0, true, std::atoi(argv[5]),
                                          std::atoi(argv[6]));
  std::printf("%d\n", q.from_counter);
  for (int c = 0; c < grid; ++c) {
    const fa::WorkTile a = q.tile(c);
    const int i = fa::TileQueue<192>::mirrored_second(q.total, grid, c);
    const fa::WorkTile b = i >= 0 ? q.tile(i) : fa::WorkTile{-192, -1};
    std::printf("%d %d %d %d\n", a.q0 / 192, a.bh, b.q0 / 192, b.bh);
  }
  return 0;
}
'''


def _mirror(tmp_path_factory, B, H, S, grid=132, tiles_per_cta=2, mirror_under=3):
    exe = compile_host_program(tmp_path_factory.mktemp("mirror"), "mirror", MIRROR_PROGRAM)
    out = subprocess.run([str(exe), *map(str, (B, H, S, grid, tiles_per_cta, mirror_under))], check=True,
                         capture_output=True, text=True).stdout.split("\n")
    return int(out[0]), [tuple(map(int, line.split())) for line in out[1:] if line]


@pytest.mark.parametrize("B, H, S, mirror_under, expected", [
    (1, 12, 4096, 3, 2),   # 264 tiles < 3 x 132: the counter, mirrored
    (1, 18, 4096, 3, 1),   # 396 = 3 x 132: the counter as it is
    (1, 12, 4096, 0, 1),   # mirror_under 0: never
    (1, 11, 4096, 3, 0),   # 242 < 2 x 132: the static list (tiles_per_cta 2)
])
def test_the_counter_mirrors_under_mirror_under_tiles_a_cta(tmp_path_factory, B, H, S, mirror_under, expected):
    from_counter, _ = _mirror(tmp_path_factory, B, H, S, mirror_under=mirror_under)
    assert from_counter == expected


def _work(q, S):  # key tiles of 128 a causal 192-row query tile runs: worked out here, not read from the kernel
    return math.ceil(min(S, (q + 1) * 192) / 128)


def test_the_mirrored_second_round_pairs_heavy_with_light(tmp_path_factory):
    """At two tiles a CTA, (1, 12, 4096): 22 query tiles a head, so a CTA's two tiles are levels l and 21 - l of
    some heads and every CTA runs the same work to a key tile, as step 27's pairs do; c + grid gives CTA 0 the
    heaviest of each round. Each of the 264 tiles once."""
    _, ctas = _mirror(tmp_path_factory, 1, 12, 4096)
    assert len(ctas) == 132
    tiles = [(q, h) for q1, h1, q2, h2 in ctas for q, h in ((q1, h1), (q2, h2))]
    assert sorted(tiles) == sorted((q, h) for q in range(22) for h in range(12))
    assert {q1 + q2 for q1, _, q2, _ in ctas} == {21}
    work = [_work(q1, 4096) + _work(q2, 4096) for q1, _, q2, _ in ctas]
    assert max(work) - min(work) <= 1  # 1.5 key tiles a query tile, rounded up: 34 or 35
    plain = [_work(21 - c // 12, 4096) + _work(21 - (c + 132) // 12, 4096) for c in range(132)]  # c, c + grid
    assert max(plain) - min(plain) >= 25  # CTA 0: levels 21 and 10, 49 key tiles; CTA 131: 11 and 0, 20


def test_under_two_tiles_a_cta_the_lightest_ctas_take_no_second_tile(tmp_path_factory):
    """(1, 11, 4096) on 132 CTAs: 242 tiles, 110 in the second round; the 110 CTAs with the heaviest first tiles
    take them lightest first, the other 22 none."""
    _, ctas = _mirror(tmp_path_factory, 1, 11, 4096)
    seconds = [(q2, h2) for _, _, q2, h2 in ctas]
    assert seconds[110:] == [(-1, -1)] * 22
    assert sorted(seconds[:110]) == sorted((q, h) for q in range(10) for h in range(11))
    assert [q2 for q2, _ in seconds[:110]] == sorted(q2 for q2, _ in seconds[:110])  # lightest to the heaviest


FA3_SECTIONS_PROGRAM = r'''
#include <cstdio>
#include <cstdlib>
#include "fa/tile_queue.cuh"

// argv: B H H_kv S D causal; prints step 65's rule (takes_fa3_sections_causal_d128), then the queue a launch of 132
// CTAs with a 60 MB L2 (an H200) makes under it, as launch_from_queue asks for it (BR 128, the D = 128 tile's rows):
// whether it takes the counter, and the query heads a section.
int main(int argc, char** argv) {
  if (argc != 7) return 2;
  const fa::AttnShape shape{std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[4]), 1.0f, std::atoi(argv[6]),
                            std::atoi(argv[3])};
  const int D = std::atoi(argv[5]);
  const bool rule = fa::takes_fa3_sections_causal_d128(shape, D);
  const auto q = fa::make_tile_queue<128>(shape, D, 2, 60LL << 20, 132, 0, false,
                                          rule ? FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA : fa::kQueueTilesPerCta, 0,
                                          rule ? static_cast<long long>(FA_QUEUE_FA3_SECTION_MB) << 20 : 0);
  std::printf("%d %d %d\n", rule ? 1 : 0, q.from_counter, q.section_heads);
  return 0;
}
'''


@pytest.mark.parametrize("B, H, H_kv, S, D, causal, rule, section, counter", [
    # 32 MB of K/V a section; a head's K and V are 2 x S x 128 x 2 bytes (2, 4, 8 MB at S = 4096, 8192, 16384)
    (4, 16, 16, 4096, 128, True, True, 16, True),    # 16 heads a section, 4 sections: the last 16 x 32 = 512 >= 396
    (2, 16, 16, 8192, 128, True, True, 8, True),     # 8 a section: 8 x 64 = 512
    (1, 16, 16, 16384, 128, True, True, 4, True),    # 4 a section: 4 x 128 = 512
    (1, 32, 8, 8192, 128, True, True, 32, True),     # 8 K/V heads fit: one section of 32 query heads
    (1, 16, 16, 4095, 128, True, False, 8, False),  # under 4096 keys: two fifths of 60 MB (12 heads), 2 sections of
                                                     # 8, the last 8 x 32 = 256 < 4 x 132: the static pairs
    (4, 16, 16, 4096, 128, False, False, 11, False),  # non-causal: 24 MB sections, 6 of 11 heads, the last 9 x 32 = 288
                                                     # < 528 tiles: the static list
    (4, 16, 16, 4096, 64, True, False, 22, True),    # D = 64 (1 MB a head): 24 heads fit, 3 sections of 22, the
                                                     # last 20 x 32 = 640 >= 528
])
def test_long_causal_d128_calls_take_fa3_sections_and_the_counter_from_three_tiles_a_cta(
        tmp_path_factory, B, H, H_kv, S, D, causal, rule, section, counter):
    """Step 65: a causal D = 128 call of 4096 keys or more takes sections of 32 MB of K/V and the counter where its last
    section holds 3 tiles a CTA; any other call two fifths of the L2 and 4 (the expectations worked out here)."""
    exe = compile_host_program(tmp_path_factory.mktemp("fa3_sections"), "fa3_sections", FA3_SECTIONS_PROGRAM)
    out = subprocess.run([str(exe), *map(str, (B, H, H_kv, S, D, int(causal)))], check=True, capture_output=True,
                         text=True).stdout.split()
    budget, per_cta = ((32 << 20), 3) if rule else ((60 << 20) * 2 // 5, 4)
    heads = section_heads(B, H, H_kv, S, D, budget)
    last = last_section_heads(B, H, heads)
    assert heads == section and (last * math.ceil(S / 128) >= per_cta * 132) is counter  # the worked-out rows agree
    assert out == [str(int(rule)), str(int(counter)), str(section)]


D64_SECTIONS_PROGRAM = r'''
#include <cstdio>
#include <cstdlib>
#include "fa/tile_queue.cuh"

// argv: B H H_kv S fa3_sections_d64(0|1); prints the queue launch_from_queue makes for the counter's causal D = 64
// tile (BR 192, ONE_SECTION, the counter from two tiles a CTA, mirrored under three, as steps 64-69 launch it) on an
// H100 (132 CTAs, 50 MB of L2), with step 68's FA3_SECTIONS_D64 as given: whether it takes the counter (2: mirrored),
// the query heads a section and every index's tile.
template <bool D64_SECTIONS>
int dump(const fa::AttnShape& shape) {
  const int tiles = fa::ceil_div(shape.S, 192) * shape.B * shape.H;
  const auto q = fa::launch_queue<192, /*ONE_SECTION=*/true, 2, 3, /*FA3_SECTIONS=*/true, D64_SECTIONS>(
      shape, 64, 2, 50LL << 20, tiles < 132 ? tiles : 132, 0);
  std::printf("%d %d\n", q.from_counter, q.section_heads);
  for (int i = 0; i < q.total; ++i) std::printf("%d %d\n", q.tile(i).q0, q.tile(i).bh);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 6) return 2;
  const fa::AttnShape shape{std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[4]), 1.0f, 1, std::atoi(argv[3])};
  return std::atoi(argv[5]) ? dump<true>(shape) : dump<false>(shape);
}
'''


@pytest.mark.parametrize("B, H, H_kv, S, sectioned_heads", [
    # A head's K and V at D = 64: 2 x S x 64 x 2 bytes, 1 MB at S = 4096, 2 MB at 8192; 32 MB a section
    (4, 16, 16, 4096, 32),   # 64 MB: two sections of 32 heads (the ladder's causal D = 64 shape)
    (8, 16, 16, 4096, 32),   # 128 MB: four
    (2, 16, 16, 8192, 16),   # 64 MB: two of 16
    (1, 40, 40, 4096, 20),   # 40 MB: two sections, split evenly (20 and 20, not 32 and 8)
    (1, 12, 12, 8192, 12),   # GPT-2's 24 MB: one section, as before
    (1, 71, 1, 8192, 71),    # Falcon-7B's one K/V head (2 MB): one section of its 71 query heads
    (1, 64, 8, 8192, 64),    # grouped: 8 K/V heads, 16 MB, one section of 64 query heads
    (1, 13, 13, 4096, 13),   # 13 MB, 286 tiles: one section, the second round mirrored
])
def test_step_68_gives_the_counters_causal_d64_tile_fa3_sections(tmp_path_factory, B, H, H_kv, S, sectioned_heads):
    """Step 68: with FA3_SECTIONS_D64 the counter's causal D = 64 tile takes sections of 32 MB of K/V (K/V heads
    split evenly, the query heads of a K/V head together), without it one section of every head; either way every
    tile once, heaviest first within a section, and the counter (mirrored under three tiles a CTA) where the last
    section holds two tiles a CTA (the expectations worked out here)."""
    exe = compile_host_program(tmp_path_factory.mktemp("d64_sections"), "d64_sections", D64_SECTIONS_PROGRAM)
    m_blocks = math.ceil(S / 192)
    for sectioned in (False, True):
        out = subprocess.run([str(exe), *map(str, (B, H, H_kv, S, int(sectioned)))], check=True, capture_output=True,
                             text=True).stdout.splitlines()
        counter, heads = map(int, out[0].split())
        expected_heads = sectioned_heads if sectioned else B * H
        assert heads == expected_heads == section_heads(B, H, H_kv, S, 64, (32 << 20) if sectioned else 1 << 60)
        total, grid = m_blocks * B * H, min(m_blocks * B * H, 132)
        last = last_section_heads(B, H, heads)
        assert counter == (0 if last * m_blocks < 2 * grid else 2 if total < 3 * grid else 1)
        tiles = [tuple(map(int, line.split())) for line in out[1:]]
        assert sorted(tiles) == sorted((q * 192, bh) for q in range(m_blocks) for bh in range(B * H))
        for start in range(0, B * H, heads):  # each section: its own heads, heaviest query tile first
            size = min(heads, B * H - start)
            part = tiles[start * m_blocks:(start + size) * m_blocks]
            assert {bh for _, bh in part} == set(range(start, start + size))
            assert [q for q, _ in part] == sorted((q * 192 for q in range(m_blocks) for _ in range(size)), reverse=True)


OLDER_QUEUE_PROGRAM = r'''
#include <cstdio>
#include <cstdlib>
#include "fa/tile_queue.cuh"

// argv: B H H_kv S l2_mb older(0|1); prints the queue launch_from_queue makes for a causal D = 128 call (BR 128, 132
// CTAs, the counter from four tiles a CTA, FA3_SECTIONS as steps 65-71 launch it) with step 71's OLDER_UNDER_PAIRS as
// given: whether it takes the counter, and the query heads a section.
template <bool OLDER>
int dump(const fa::AttnShape& shape, long long l2) {
  const int tiles = fa::ceil_div(shape.S, 128) * shape.B * shape.H;
  const auto q = fa::launch_queue<128, /*ONE_SECTION=*/false, fa::kQueueTilesPerCta, 0, /*FA3_SECTIONS=*/true,
                                  /*FA3_SECTIONS_D64=*/true, OLDER>(shape, 128, 2, l2, tiles < 132 ? tiles : 132, 0);
  std::printf("%d %d\n", q.from_counter, q.section_heads);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 7) return 2;
  const fa::AttnShape shape{std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[4]), 1.0f, 1, std::atoi(argv[3])};
  const long long l2 = std::atoll(argv[5]) << 20;
  return std::atoi(argv[6]) ? dump<true>(shape, l2) : dump<false>(shape, l2);
}
'''


@pytest.mark.parametrize("B, H, H_kv, S, l2_mb, older", [
    # A K/V head at S = 4096, D = 128: 2 MB. The older queue: two fifths of the L2 (20 MB on an H100: 10 K/V heads);
    # step 65's: 32 MB (16). Static heavy-light pairs: B x H x 32 tiles / 2 over 132 CTAs.
    (4, 16, 16, 4096, 50, True),    # older: 7 sections of 10, the last 4 x 32 = 128 < 528 tiles: static, 7.8 a CTA
    (1, 16, 16, 4096, 50, True),    # 2 sections of 8, static, 1.9 pairs a CTA
    (5, 16, 16, 4096, 50, False),   # 8 sections of 10, the last 10 x 32 = 320: static, 9.7 pairs a CTA: over 8
    (8, 16, 16, 4096, 50, False),   # 15.5 pairs a CTA
    (4, 32, 8, 4096, 50, True),     # grouped: 32 K/V heads, 4 sections of 8 (32 query heads), the last 1024 >= 528:
                                    # the older queue takes the counter
    (8, 32, 8, 4096, 50, False),    # 64 K/V heads, 7 sections of 10 (40 query heads), the last 16 x 32 = 512 < 528:
                                    # static, 31 pairs a CTA
    (8, 32, 8, 4096, 60, True),     # on a 60 MB L2: 12 K/V heads fit, 6 sections of 11 (44), the last 36 x 32: counter
    (4, 16, 16, 8191, 50, False),   # 4 MB a head: 13 sections of 5, the last 4 x 64 = 256 tiles: static, 15.5 pairs a
                                    # CTA, over 8
    (2, 16, 16, 6144, 50, True),    # 3 MB a head: 6 sections of 6, the last 2 x 48 = 96: static, 5.8 pairs a CTA
    (2, 16, 16, 8192, 50, False),   # 8192 keys or more: step 65's sections whatever the older queue would do
])
def test_step_71_keeps_the_older_queue_where_it_balances_a_call_under_8192_keys(tmp_path_factory, B, H, H_kv, S, l2_mb,
                                                                                older):
    """Step 71: a causal D = 128 call of 4096-8191 keys keeps the older queue (two fifths of the L2, the counter from
    four tiles a CTA) where that queue takes the counter or walks at most 8 static pairs a CTA; step 65's 32 MB
    sections and three tiles a CTA otherwise, and always without OLDER_UNDER_PAIRS (expectations worked out here)."""
    exe = compile_host_program(tmp_path_factory.mktemp("older_queue"), "older_queue", OLDER_QUEUE_PROGRAM)
    m_blocks, grid = math.ceil(S / 128), 132
    older_budget, fa3_budget = (l2_mb << 20) * 2 // 5, 32 << 20
    older_counter = takes_counter(B, H, H_kv, S, 128, older_budget, 4, grid)
    pairs_a_cta = math.ceil(B * H * m_blocks / 2) / grid
    assert (S < 8192 and (older_counter or pairs_a_cta <= 8)) is older  # the worked-out rows agree with the rule
    for flag in (0, 1):
        out = subprocess.run([str(exe), *map(str, (B, H, H_kv, S, l2_mb, flag))], check=True, capture_output=True,
                             text=True).stdout.split()
        budget, per_cta = (older_budget, 4) if flag and older else (fa3_budget, 3)
        expected = [str(int(takes_counter(B, H, H_kv, S, 128, budget, per_cta, grid))),
                    str(section_heads(B, H, H_kv, S, 128, budget))]
        assert out == expected, (flag, out, expected)
