// Step 55 - +wide groups in 16-row blocks: a call of more than 32 packed query rows a K/V head (Falcon-7B's 71
// on one) runs on the 16-row TMA tile, ceil(rows / 16) row blocks a (sequence, K/V head), each reading the
// head's keys, where step 54's rule over those blocks leaves chunks of at most 2,048 keys
// (fa::wide_group_takes_row_blocks); else it keeps step 46's row warps. Calls of 32 rows or fewer as step 54.
// Hypothesis: the row warps put a K/V head's 71 rows in one CTA of 5 warps, so at Falcon-7B's batch 64 of 1,024
// tokens 64 CTAs cannot fill the SMs: step 54 splits the keys 4 ways (256 CTAs, 13.5 us) and merges them (5.8
// us; Nsight Compute, data/explorations/2026-12-02-decode-wide-groups call 1), where SDPA's cuDNN backend runs
// 320 CTAs of 16 rows and 4 warps, no merge, in 16.4 us. The 16-row tile's 4 warps take 16 keys each of a tile:
// 5 blocks a head fill the SMs unsplit (their K/V reads meet in L2) and the merge goes. Measured before this step
// (call 2, one H200, hot / cold): 1.172x / 1.163x over step 54 at (64, 71, 1, 64, 1024), 1.159x / 1.113x at the
// mixed batch (32, 71, 1, 64, 4096) (3 chunks of 1,408 keys); 0.718x at (8, 71, 1, 64, 8192) (3 chunks of
// 2,752 keys a CTA, walked one tile after another) and 0.698x at the paged q4 call (2 chunks of 16,384 keys
// a CTA): hence the 2,048-key bound.
// Predicted: 1.10-1.20x over step 54 at (64, 71, 1, 64, 1024) and (32, 71, 1, 64, 4096, mixed), hot and cold;
// 0.99-1.01x at every other set shape (the same kernels and chunks).
#include "fa/decode_launch.cuh"

namespace {

// A wide call takes the 16-row tile's row blocks where step 54's rule over them leaves chunks of at most 2,048 keys.
struct WideRule {
  static bool takes_row_blocks(long long pairs, long long wave, long long sms, int capacity, int BC,
                               fa::SplitPartials& p) {
    return fa::wide_group_takes_row_blocks(pairs, wave, sms, capacity, BC, p);
  }
};

template <class Elem, int D>
using LaunchDecode = LaunchDecodeWide<Elem, D, WideRule>;

}  // namespace

FA_EXPORT_DECODE_VARIANT(LaunchDecode, WidestTile)
