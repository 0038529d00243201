"""CPU test of the Hopper branch's tile rules (kernels/include/fa/tile_size.cuh), compiled for the host with nvcc:
step 51's takes_three_wg_tile_causal_d64, step 52's takes_three_wg_queue_tile_causal_d64, step 53's stages, step 63's
takes_counter_tile_causal_d64, step 64's takes_mirrored_counter_tile_causal_d64 and step 69's hopper_tile_kind (the
counter's tile from 2048 keys). The expectations are worked out here from each shape (pairs of 192-row tiles, the CTAs
one an SM, the last round's fill; the tiles an SM for the counter; the shared memory), not read from the header; the
shapes are those timed
in data/explorations/2026-11-29-ftz-row-max (calls 2 and 4) and data/explorations/2026-11-29-q-double-buffer."""

from __future__ import annotations

import subprocess

import pytest

from tests.host_programs import compile_host_program

PROGRAM = r'''
#include <cstdio>
#include <cstdlib>
#include "fa/tile_size.cuh"

// argv: B H S causal sms; prints whether a D = 64 call takes the causal three-warpgroup tile from the static pairs
// (step 51's rule) and from the counter (step 52's), and the counter's tile by step 63's rule and step 64's, 1 or 0 each.
int main(int argc, char** argv) {
  if (argc != 6) return 2;
  const int H = std::atoi(argv[2]);
  const fa::AttnShape shape{std::atoi(argv[1]), H, std::atoi(argv[3]), 1.0f, std::atoi(argv[4]), H};
  const int sms = std::atoi(argv[5]);
  std::printf("%d %d %d %d\n", fa::takes_three_wg_tile_causal_d64(shape, sms) ? 1 : 0,
              fa::takes_three_wg_queue_tile_causal_d64(shape, sms) ? 1 : 0,
              fa::takes_counter_tile_causal_d64(shape, sms) ? 1 : 0,
              fa::takes_mirrored_counter_tile_causal_d64(shape, sms) ? 1 : 0);
  return 0;
}
'''


@pytest.fixture(scope="module")
def rule_program(tmp_path_factory):
    return compile_host_program(tmp_path_factory.mktemp("tile_rules"), "tile_rules", PROGRAM)


def _all_rules(exe, B, H, S, causal, sms) -> list[bool]:
    """The program's four answers for a D = 64 call: steps 51, 52, 63 and 64's rules."""
    out = subprocess.run([str(exe), *map(str, (B, H, S, int(causal), sms))], check=True, capture_output=True,
                         text=True).stdout
    return [bit == "1" for bit in out.split()]


def rules(exe, B, H, S, causal=True, sms=132) -> tuple[bool, bool]:
    """(step 51's rule, step 52's) for a D = 64 call."""
    pairs, queue = _all_rules(exe, B, H, S, causal, sms)[:2]
    return pairs, queue


def counter_tile(exe, B, H, S, causal=True, sms=132) -> bool:
    """Step 63's rule for a D = 64 call."""
    return _all_rules(exe, B, H, S, causal, sms)[2]


def takes(exe, B, H, S, causal=True, sms=132) -> bool:
    return rules(exe, B, H, S, causal, sms)[0]


# (B, H, S) -> pairs a CTA on 132 SMs and the last round's fill (pairs = ceil(ceil(S / 192) / 2) * B * H):
@pytest.mark.parametrize("B, H, S, expected", [
    (1, 12, 8192, True),    # 22 pairs a head, 264: two rounds, full (GPT-2's models row)
    (1, 71, 8192, True),    # 1562: 11.83 a CTA, 12 rounds 98.6 % full (Falcon-7B's)
    (16, 16, 4096, True),   # 11 a head, 2816: 21.33 a CTA, 97.0 %
    (3, 16, 8192, True),    # 1056: 8 rounds, full
    (1, 24, 16384, True),   # 43 a head, 1032: 7.82 a CTA, 97.7 %
    (4, 16, 4096, False),   # 704: 5.33 a CTA, 88.9 %
    (2, 16, 8192, False),   # 704: 88.9 %
    (2, 8, 16384, False),   # 688: 5.21 a CTA, 86.9 %
    (1, 16, 8192, False),   # 352: 2.67 a CTA, 88.9 %
    (4, 16, 2048, False),   # S below 4096: step 33's three CTAs an SM keep it
    (1, 2, 4097, True),     # 22 pairs on 22 CTAs: one round, full (the correctness grid's long case)
])
def test_causal_d64_takes_three_warpgroups_where_the_pairs_fill_the_last_round(rule_program, B, H, S, expected):
    assert takes(rule_program, B, H, S) is expected


def test_the_rule_counts_the_gpus_sms_and_leaves_non_causal_calls_to_step_49(rule_program):
    # 1562 pairs: 98.6 % full on 132 SMs; on 114, 13.70 a CTA of 14 rounds, 97.9 %; on 160, 9.76 of 10, 97.6 %;
    # on 150, 10.41 of 11, 94.7 %: just under the 95 % line
    assert [takes(rule_program, 1, 71, 8192, sms=n) for n in (114, 132, 150, 160)] == [True, True, False, True]
    assert not takes(rule_program, 1, 12, 8192, causal=False)
    assert not takes(rule_program, 1, 12, 4095) and takes(rule_program, 1, 12, 4096)  # 11 pairs a head: one round


# Step 52: the calls step 51 leaves, where ceil(S / 192) * B * H tiles are at least 4 an SM (528 on 132 SMs)
@pytest.mark.parametrize("B, H, S, expected", [
    (4, 16, 4096, True),    # 88.9 %, 1408 tiles
    (2, 32, 4096, True),    # the same counts
    (1, 16, 16384, True),   # 86 tiles a head: 688 pairs, 86.9 %; 1376 tiles
    (1, 16, 8192, True),    # 352 pairs, 88.9 %; 43 tiles a head, 688
    (1, 8, 8192, False),    # 176 pairs, 66.7 %, but 344 tiles: under 528
    (1, 12, 8192, False),   # step 51's (two full rounds)
    (16, 16, 4096, False),  # step 51's (97.0 %)
    (4, 16, 2048, False),   # S below 4096
    (1, 32, 4097, True),    # the correctness grid's S = 4097 grid: 352 pairs, 88.9 %; 704 tiles
])
def test_causal_d64_takes_three_warpgroups_from_the_counter_where_the_pairs_leave_the_last_round(rule_program, B, H,
                                                                                               S, expected):
    pairs, queue = rules(rule_program, B, H, S)
    assert queue is expected
    assert not (pairs and queue)  # one rule or the other, never both


def test_the_counters_rule_counts_the_sms_and_takes_no_non_causal_call(rule_program):
    # (1, 8, 8192): 176 pairs, on 80 SMs 2.2 a CTA of 3 rounds (73 %), 344 tiles >= 320; on 132, 344 < 528
    assert [rules(rule_program, 1, 8, 8192, sms=n)[1] for n in (80, 132)] == [True, False]
    # (1, 32, 4097): 704 tiles, exactly 4 an SM on 176 SMs (352 pairs: 2 a CTA, 100 %: step 51's), 4.4 on 160
    assert rules(rule_program, 1, 32, 4097, sms=176) == (True, False)
    assert rules(rule_program, 1, 32, 4097, sms=160) == (False, True)
    # (1, 16, 8192): 688 tiles, exactly 4 an SM on 172 SMs (352 pairs: 3 rounds, 68 %), under 4 on 173
    assert [rules(rule_program, 1, 16, 8192, sms=n) for n in (172, 173)] == [(False, True), (False, False)]
    assert rules(rule_program, 4, 16, 4096, causal=False) == (False, False)
    assert rules(rule_program, 4, 16, 4095) == (False, False)  # S under 4096: neither


STAGES_PROGRAM = r'''
#include <cstdio>
#include "fa/tile_size.cuh"

// The K/V stages and dynamic shared memory of the D = 64 three-warpgroup tiles, static list (kThreeWgs) and
// counter (kThreeWgsQueue), as steps 49-52 name them (HopperTileOf's default) and as step 53 does.
template <class T>
void print() {
  std::printf("%d %zu\n", T::KV_STAGES, T::smem_bytes());
}
int main() {
  using K = fa::HopperTileKind;
  print<fa::HopperTileOf<half, 64, K::kThreeWgs>>();
  print<fa::HopperTileOf<half, 64, K::kThreeWgsQueue>>();
  print<fa::HopperTileOf<half, 64, K::kThreeWgs, true, FA_TILE_STAGES_D64_THREE_WGS>>();
  print<fa::HopperTileOf<half, 64, K::kThreeWgsQueue, true, FA_TILE_STAGES_D64_THREE_WGS>>();
  return 0;
}
'''


def test_step_53_gives_the_static_three_warpgroup_tile_two_stages_and_leaves_the_counters_at_three(tmp_path):
    """Step 53's tile alias (HopperTileOf with FA_TILE_STAGES_D64_THREE_WGS) changes kThreeWgs alone. Shared memory
    worked out here: 192 query rows and STAGES x (K + V) tiles of 128 keys, D = 64, 2 B an element, plus the 1024 B
    the swizzled layout's alignment may take: 3 stages 24,576 + 98,304 + 1,024 B, 2 stages 24,576 + 65,536 + 1,024."""
    exe = compile_host_program(tmp_path, "stages", STAGES_PROGRAM)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split("\n")
    three, two = f"3 {192 * 64 * 2 + 3 * 2 * 128 * 64 * 2 + 1024}", f"2 {192 * 64 * 2 + 2 * 2 * 128 * 64 * 2 + 1024}"
    assert out[:4] == [three, three, two, three]  # steps 49-52: both three; step 53: the static list's two


# Step 63: every causal call of S >= 4096 whose ceil(S / 192) * B * H tiles are more than 2 an SM (264 on 132 SMs: more
# than one round of heavy-light pairs), whatever the pairs fill: the rows measured in
# data/checks/2026-12-04-step63-counter-tile-causal-d64-draft (calls 1-2) and the edges of the count.
@pytest.mark.parametrize("B, H, S, expected", [
    (1, 71, 8192, True),    # Falcon-7B: 43 tiles a head, 3053 (step 51's before)
    (1, 12, 8192, True),    # GPT-2: 516 (step 51's before: two full rounds of pairs)
    (1, 71, 4096, True),    # 22 a head, 1562
    (2, 12, 8192, True),    # 1032
    (4, 16, 4096, True),    # 1408 (step 52's already)
    (1, 7, 8192, True),     # 301: 2.28 an SM (step 50's tiles before)
    (1, 13, 4096, True),    # 286: 2.17 an SM
    (1, 12, 4096, False),   # 264: exactly 2 an SM, one round of pairs (step 51's, 1.30x faster than the counter)
    (1, 11, 4096, False),   # 242 < 264
    (1, 16, 4095, False),   # S under 4096
    (4, 71, 2048, False),   # Falcon-7B at S = 2048: S under 4096
])
def test_step_63_sends_every_long_causal_d64_call_past_two_tiles_an_sm_to_the_counters_tile(rule_program, B, H, S,
                                                                                            expected):
    assert counter_tile(rule_program, B, H, S) is expected


def test_step_63_counts_the_sms_and_takes_no_non_causal_call(rule_program):
    # (1, 12, 4096): 264 tiles, not more than 2 an SM on 132, more on 131
    assert [counter_tile(rule_program, 1, 12, 4096, sms=n) for n in (131, 132)] == [True, False]
    assert not counter_tile(rule_program, 4, 16, 4096, causal=False)


def mirrored_counter_tile(exe, B, H, S, causal=True, sms=132) -> bool:
    """Step 64's rule for a D = 64 call."""
    return _all_rules(exe, B, H, S, causal, sms)[3]


# Step 64: from two tiles an SM on, inclusive (its mirrored second round balances one round of pairs), S >= 4096.
@pytest.mark.parametrize("B, H, S, expected", [
    (1, 12, 4096, True),    # 264: exactly 2 an SM (step 63's rule: not)
    (1, 11, 4096, False),   # 242 < 264
    (1, 7, 8192, True),     # 301
    (1, 71, 8192, True),    # Falcon-7B: 3053
    (1, 16, 4095, False),   # S under 4096
])
def test_step_64_takes_the_counters_tile_from_two_tiles_an_sm_inclusive(rule_program, B, H, S, expected):
    assert mirrored_counter_tile(rule_program, B, H, S) is expected
    assert not mirrored_counter_tile(rule_program, B, H, S, causal=False)


KIND_PROGRAM = r'''
#include <cstdio>
#include <cstdlib>
#include "fa/tile_size.cuh"

// argv: B H S causal sms; prints the tile a D = 64 call takes (fa::HopperTileKind as an int) as steps 64-68 choose it
// and as step 69 does (OVERLAPPED_MIN_S).
int main(int argc, char** argv) {
  if (argc != 6) return 2;
  const int H = std::atoi(argv[2]);
  const fa::AttnShape shape{std::atoi(argv[1]), H, std::atoi(argv[3]), 1.0f, std::atoi(argv[4]), H};
  const int sms = std::atoi(argv[5]);
  const auto before = fa::hopper_tile_kind<64, true, true, true, true, true, true, true>(shape, sms);
  const auto after = fa::hopper_tile_kind<64, true, true, true, true, true, true, true, true>(shape, sms);
  std::printf("%d %d\n", static_cast<int>(before), static_cast<int>(after));
  return 0;
}
'''

SHORT, LONG, THREE_CTAS, THREE_WGS, THREE_WGS_QUEUE = range(5)  # fa::HopperTileKind's order


# Step 69: the counter's tile from 2048 keys. Worked out on 132 SMs: the counter's tile where ceil(S / 192) * B * H is
# 264 or more (two an SM, step 64) and S >= 2048 (before: 4096); else, from 4096 keys, step 51's static pairs where they
# fill the last round 95 %; else step 33's three CTAs where 64-row tiles, ceil(S / 64) * B * H, are 1320 or more
# (S < 8192); else the 192-key tile from S = 4096, else the short one.
@pytest.mark.parametrize("B, H, S, causal, before, after", [
    (4, 12, 2048, True, THREE_CTAS, THREE_WGS_QUEUE),  # GPT-2's models row: 528 tiles; 1536 64-row tiles
    (4, 71, 2048, True, THREE_CTAS, THREE_WGS_QUEUE),  # Falcon-7B's: 3124 tiles
    (4, 16, 2048, True, THREE_CTAS, THREE_WGS_QUEUE),  # 704
    (2, 16, 3000, True, THREE_CTAS, THREE_WGS_QUEUE),  # 16 tiles a head, 512; 47 64-row tiles a head, 1504
    (1, 24, 2048, True, SHORT, THREE_WGS_QUEUE),       # 264 tiles: exactly two an SM (inclusive); 768 64-row tiles
    (1, 23, 2048, True, SHORT, SHORT),                 # 253 tiles, under two an SM: as before
    (1, 16, 2048, True, SHORT, SHORT),                 # 176 tiles (one round of pairs, which step 51 takes from 4096)
    (1, 16, 2047, True, SHORT, SHORT),                 # under 2048 keys: as before
    (4, 16, 2048, False, THREE_CTAS, THREE_CTAS),      # non-causal: step 49's rule (704 tiles under 8 an SM), as before
    (4, 16, 4096, True, THREE_WGS_QUEUE, THREE_WGS_QUEUE),  # from 4096 keys: as before
    (1, 12, 4096, True, THREE_WGS_QUEUE, THREE_WGS_QUEUE),  # 264: exactly two an SM (step 64's, inclusive)
    (1, 8, 4096, True, THREE_WGS, THREE_WGS),          # 176 tiles; 88 pairs on 88 CTAs: step 51's, as before
])
def test_step_69_takes_the_192_row_tiles_for_causal_d64_calls_from_2048_keys(tmp_path_factory, B, H, S, causal, before,
                                                                             after):
    exe = compile_host_program(tmp_path_factory.mktemp("tile_kind"), "tile_kind", KIND_PROGRAM)
    out = subprocess.run([str(exe), *map(str, (B, H, S, int(causal), 132))], check=True, capture_output=True,
                         text=True).stdout.split()
    assert [int(k) for k in out] == [before, after]
