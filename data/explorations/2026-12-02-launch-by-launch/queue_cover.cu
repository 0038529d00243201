// Host-only check of the queue's order (no GPU): for each shape, make_tile_queue with the H200's 60 MB L2 and a
// grid of 132, then every index of the counter's order maps to a distinct (query tile, head) and all are covered;
// prints the sections, the last section's tiles and whether the launch takes the counter. Built three times by
// queue_cover.sh with the exploration's defines.
#include <cstdio>
#include <set>
#include <utility>

#include "fa/tile_queue.cuh"

int main() {
  const int shapes[][6] = {  // B, H, S, causal, H_kv, D
      {1, 16, 16384, 1, 16, 128}, {2, 16, 8192, 1, 16, 128}, {4, 16, 4096, 1, 16, 128}, {16, 16, 1024, 1, 16, 128},
      {1, 16, 16384, 0, 16, 128}, {1, 32, 8192, 1, 8, 128},  {1, 64, 8192, 1, 8, 128},  {1, 28, 8192, 1, 4, 128},
      {4, 32, 2048, 1, 8, 128},   {3, 5, 3000, 1, 5, 128},   {7, 6, 9000, 1, 2, 128}};
  int bad = 0;
  for (const auto& x : shapes) {
    fa::AttnShape s{x[0], x[1], x[2], 1.0f, x[3], x[4]};
    const int grid = 132;
    const auto q = fa::make_tile_queue<128>(s, x[5], 2, 60LL << 20, grid, 0);
    std::set<std::pair<int, int>> seen;
    for (int i = 0; i < q.total; ++i) {
      const fa::WorkTile w = q.tile(i);
      if (w.q0 < 0 || w.q0 >= s.S || w.bh < 0 || w.bh >= s.B * s.H || !seen.insert({w.q0, w.bh}).second) ++bad;
    }
    if (static_cast<int>(seen.size()) != q.total || q.tile(q.total).q0 >= 0) ++bad;
    const int full = q.heads / q.section_heads > 0 ? q.heads / q.section_heads : 1;
    const int last_heads = FA_EXP_QUEUE_MERGE_TAIL ? q.heads - (full - 1) * q.section_heads
                                                   : q.heads - (fa::ceil_div(q.heads, q.section_heads) - 1) * q.section_heads;
    std::printf("(%d, %d, %d, %d%s, kv%d): %d tiles, section %d heads, last %d heads (%d tiles), counter %d\n", x[0],
                x[1], x[2], x[5], x[3] ? ", causal" : "", x[4], q.total, q.section_heads, last_heads,
                last_heads * q.m_blocks, q.from_counter);
  }
  std::printf("%s\n", bad ? "FAILED" : "every tile once");
  return bad != 0;
}
