#include <cstdio>
#include <cstdlib>
#include "fa/tile_queue.cuh"
// argv: B H H_kv S L2_MB; prints whether the launch takes FA3 sections under launch_queue (D=128 causal, BR 128,
// 132 CTAs) and its counter/section heads
int main(int argc, char** argv) {
  const fa::AttnShape shape{std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[4]), 1.0f, 1, std::atoi(argv[3])};
  const long long l2 = std::atoll(argv[5]) << 20;
  const int tiles = fa::ceil_div(shape.S, 128) * shape.B * shape.H;
  const auto q = fa::launch_queue<128, false, fa::kQueueTilesPerCta, 0, true, true>(shape, 128, 2, l2,
                                                                                     tiles < 132 ? tiles : 132, 0);
  std::printf("counter=%d section_heads=%d\n", q.from_counter, q.section_heads);
  return 0;
}
