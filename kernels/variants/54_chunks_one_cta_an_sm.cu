// Step 54 - +chunks counted for one CTA an SM: where step 42's rule splits a call's keys (its (row block,
// sequence, K/V head) pairs under 0.8 of a wave of SMs x CTAs an SM), the TMA tile's calls take the fewest
// chunks, at least 2, whose CTAs fill one CTA an SM within 85 % of the best count's efficiency
// (fa::split_chunks_one_cta_an_sm) instead of filling the occupancy's two CTAs an SM. The row warps' calls
// (more than 32 rows a K/V head) keep step 42's count.
// Hypothesis: one CTA's copy-engine ring already streams an SM's share of the HBM bandwidth, so a second
// CTA an SM buys no bandwidth while its chunks cost partial O's to write and merge. Exploration
// 2026-12-02-decode-splits (H200, hot): forced counts are fastest at about 128 CTAs (2 chunks at 64 pairs,
// 4 at 32, 12-16 at 8); step 42's rule with the wave counted as SMs gave 1.020x-1.095x over step 47 at the
// five streaming shapes it re-splits, 1.023x at a paged q4 call of 128 pairs it stopped splitting and
// 0.966x at Qwen2.5-7B's mixed batch of 128 pairs it stopped splitting (the longest sequence's chunk
// doubled): hence at least 2 chunks where the rule splits.
// Predicted: 1.02-1.10x over step 47 at (8, 32 | 64, 8, 128, 8192), (8, 28, 4, 128, 8192),
// (1, 32, 8, 128, 131072) and (8, 64, 8, 128, 131072), hot and cold; 0.99-1.01x at every other set shape.
#include "fa/decode_launch.cuh"

namespace {

// A wide call keeps step 46's row warps, whatever its pairs.
struct WideRule {
  static bool takes_row_blocks(long long, long long, long long, int, int, fa::SplitPartials&) { return false; }
};

template <class Elem, int D>
using LaunchDecode = LaunchDecodeWide<Elem, D, WideRule>;

}  // namespace

FA_EXPORT_DECODE_VARIANT(LaunchDecode, WidestTile)
