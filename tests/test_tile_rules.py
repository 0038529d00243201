"""CPU test of the Hopper branch's tile rules (kernels/include/fa/tile_size.cuh), compiled for the host with nvcc:
step 51's takes_three_wg_tile_causal_d64. The expectations are worked out here from each shape (pairs of 192-row
tiles, the CTAs one an SM, the last round's fill), not read from the header; the shapes are those the exploration
timed (data/explorations/2026-11-29-ftz-row-max, calls 2 and 4)."""

from __future__ import annotations

import subprocess

import pytest

from tests.host_programs import compile_host_program

PROGRAM = r'''
#include <cstdio>
#include <cstdlib>
#include "fa/tile_size.cuh"

// argv: B H S causal sms; prints 1 where a D = 64 call takes the causal three-warpgroup tile (step 51's rule).
int main(int argc, char** argv) {
  if (argc != 6) return 2;
  const int H = std::atoi(argv[2]);
  const fa::AttnShape shape{std::atoi(argv[1]), H, std::atoi(argv[3]), 1.0f, std::atoi(argv[4]), H};
  std::printf("%d\n", fa::takes_three_wg_tile_causal_d64(shape, std::atoi(argv[5])) ? 1 : 0);
  return 0;
}
'''


@pytest.fixture(scope="module")
def rule_program(tmp_path_factory):
    return compile_host_program(tmp_path_factory.mktemp("tile_rules"), "tile_rules", PROGRAM)


def takes(exe, B, H, S, causal=True, sms=132) -> bool:
    out = subprocess.run([str(exe), *map(str, (B, H, S, int(causal), sms))], check=True, capture_output=True,
                         text=True).stdout
    return out.strip() == "1"


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
