// Step 56 - +row blocks fill one wave: a wide call (more than 32 packed query rows a K/V head, Falcon-7B's 71 on one)
// takes the 16-row tile's row blocks with the most chunks whose CTAs fit one wave of that tile (pairs x chunks <= SMs
// x its CTAs an SM), where one chunk a block fits and the chunks are at most 2,048 keys
// (fa::wide_group_fills_one_wave); else step 46's row warps. Step 55 counted the row blocks' chunks by step 54's rule
// (over one CTA an SM). Calls of 32 rows or fewer as step 55.
// Hypothesis: the 16-row tile runs 3 CTAs an SM at D = 64 (a wave of 396 on 132 SMs); step 54's rule, made for the
// tile that streams an SM's share of HBM from one CTA, puts more CTAs than that wave where the blocks are few, and the
// CTAs past it run as a second, partial round of short chunks. Measured before this step (forced counts,
// data/explorations/2026-12-02-decode-row-block-chunks call 1, one H200, hot): the wave's count the fastest
// configuration or within 1 % of it at seven uniform Falcon-7B shapes, 1.29x over step 55's at (32, 71, 1, 64, 1024)
// (2 chunks against 3), 1.23x at (32, 71, 1, 64, 2048), 1.27x at (32, 71, 1, 64, 1024, q2); the row warps where one
// chunk does not fit, (64, 71, 1, 64, 1024, q2), 1.10x. But at the mixed batch (32, 71, 1, 64, 4096), whose short
// sequences leave CTAs idle (the launcher cannot see the lengths), 2 chunks took 0.872x of 3.
// Predicted: 0.85-1.10x over step 55 at the set shapes whose launch it changes: 0.85-0.90x at (32, 71, 1, 64, 4096,
// mixed), hot and cold (a loss the step takes for the uniform batches); 0.95-1.10x at (8, 71, 1, 64, 8192) (40 blocks:
// 9 chunks of 960 keys on the row blocks where step 55 keeps the row warps); 0.99-1.01x at every other set shape (the
// same launches); held out, 1.20-1.35x at (32, 71, 1, 64, 1024) and (32, 71, 1, 64, 1024, q2), 1.15-1.30x at (32, 71,
// 1, 64, 2048), 1.05-1.15x at (64, 71, 1, 64, 1024, q2).
#include "fa/decode_launch.cuh"

namespace {

// A wide call takes the 16-row tile's row blocks with the most chunks whose CTAs fit one wave of that tile, where
// one chunk fits and the chunks are at most 2,048 keys.
struct WideRule {
  static bool takes_row_blocks(long long pairs, long long wave, long long, int capacity, int BC,
                               fa::SplitPartials& p) {
    return fa::wide_group_fills_one_wave(pairs, wave, capacity, BC, p);
  }
};

template <class Elem, int D>
using LaunchDecode = LaunchDecodeWide<Elem, D, WideRule>;

}  // namespace

FA_EXPORT_DECODE_VARIANT(LaunchDecode, WidestTile)
