// Host-only check of the queue's order (no GPU): for each shape, make_tile_queue with the H200's 60 MB L2 and a
// grid of 132, then every index of the counter's order maps to a distinct (query tile, head) and all are covered;
// prints the sections, the last section's tiles and whether the launch takes the counter. Built under each
// configuration's defines by queue_cover.sh. The 192-row shapes are the three-warpgroup counter tile's (causal
// D = 64, one CTA an SM) in L2 sections, which step 52's launch does not take (it takes one section): call 4's draft.
#include <cstdio>
#include <set>
#include <utility>

#include "fa/tile_queue.cuh"

template <int BR>
int cover(const int (&x)[6]) {  // B, H, S, causal, H_kv, D
  const fa::AttnShape s{x[0], x[1], x[2], 1.0f, x[3], x[4]};
  const auto q = fa::make_tile_queue<BR>(s, x[5], 2, 60LL << 20, /*grid=*/132, /*slot=*/0);
  int bad = 0;
  std::set<std::pair<int, int>> seen;
  for (int j = 0; j < q.total; ++j) {
    const fa::WorkTile w = q.tile(j);
    if (w.q0 < 0 || w.q0 >= s.S || w.q0 % BR || w.bh < 0 || w.bh >= s.B * s.H || !seen.insert({w.q0, w.bh}).second)
      ++bad;
  }
  if (static_cast<int>(seen.size()) != q.total || q.tile(q.total).q0 >= 0) ++bad;
  const int full = q.heads / q.section_heads > 0 ? q.heads / q.section_heads : 1;
  const int last_heads = FA_EXP_QUEUE_MERGE_TAIL ? q.heads - (full - 1) * q.section_heads
                                                 : q.heads - (fa::ceil_div(q.heads, q.section_heads) - 1) * q.section_heads;
  std::printf("%d rows (%d, %d, %d, %d%s, kv%d): %d tiles, section %d heads, last %d heads (%d tiles), counter %d\n",
              BR, x[0], x[1], x[2], x[5], x[3] ? ", causal" : "", x[4], q.total, q.section_heads, last_heads,
              last_heads * q.m_blocks, q.from_counter);
  return bad;
}

int main() {
  const int shapes_128[][6] = {
      {1, 16, 16384, 1, 16, 128}, {2, 16, 8192, 1, 16, 128}, {4, 16, 4096, 1, 16, 128}, {16, 16, 1024, 1, 16, 128},
      {1, 16, 16384, 0, 16, 128}, {1, 32, 8192, 1, 8, 128},  {1, 64, 8192, 1, 8, 128},  {1, 28, 8192, 1, 4, 128},
      {4, 32, 2048, 1, 8, 128},   {3, 5, 3000, 1, 5, 128},   {7, 6, 9000, 1, 2, 128}};
  const int shapes_192[][6] = {{4, 16, 4096, 1, 16, 64}, {2, 16, 8192, 1, 16, 64}, {1, 16, 16384, 1, 16, 64},
                               {8, 16, 4096, 1, 16, 64}, {1, 12, 8192, 1, 12, 64}, {1, 71, 8192, 1, 1, 64}};
  int bad = 0;
  for (const auto& x : shapes_128) bad += cover<128>(x);
  for (const auto& x : shapes_192) bad += cover<192>(x);
  std::printf("%s\n", bad ? "FAILED" : "every tile once");
  return bad != 0;
}
