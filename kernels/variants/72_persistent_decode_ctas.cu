// Step 72 - +persistent decode CTAs: the TMA tile's calls of more works (row block, chunk, K/V head, sequence) than a
// wave holds (SMs x the kernel's CTAs an SM) launch one wave of CTAs, each walking its works with one ring that runs
// on from one work to the next, the merge of a work's warps in ring slots of its own, the work decoded with the
// call's divisors made on the host (fa/decode_persistent.cuh). The other calls, and the D = 128 tile of 32 rows
// (whose persistent kernel would spill), take step 70's grid and kernel; the row-warp calls are step 46's.
// Hypothesis: at a call of more works than a wave (Llama-3-8B's and -70B's batch 64 of 1,024 tokens: 512 works on an
// H100's 264 slots, 16 tiles each), a CTA's merge and write of O hold its SM slot while no load of its own is in
// flight. With the merge and write switched off, step 70 ran 1.047x and 1.059x its own speed there, hot, on an H100
// (data/explorations/2026-12-06-decode-phase-exposure). A persistent CTA's producer streams the next work's first
// tiles into the stages the merge leaves free: the merges between works are hidden, the last one is not.
// Predicted: 1.00-1.02x over step 70 at the two batch-64 calls of 8 K/V heads, hot; 1.00x +- 0.005 at every other set
// shape (step 70's grid and kernel there); written before the exploration's call 4
// (data/explorations/2026-12-06-persistent-decode-ctas). Call 4 on an H100 measured 0.9988x and 1.0006x hot at the
// batch-64 calls, intervals across 1: no gain there. The first versions, persistent at every call, lost 1-7 % at the
// calls of one work a CTA.
#include "fa/decode_persistent.cuh"

#ifndef FA_DECODE_PROMOTE_MAX_L2_MB
#define FA_DECODE_PROMOTE_MAX_L2_MB 52
#endif

namespace {

struct WideRule {  // step 56's, as steps 57 and 70
  static bool takes_row_blocks(long long pairs, long long wave, long long, int capacity, int BC,
                               fa::SplitPartials& p) {
    return fa::wide_group_fills_one_wave(pairs, wave, capacity, BC, p);
  }
};

template <class Elem, int D>
using LaunchDecode = LaunchDecodePersistent<Elem, D, WideRule, PromotionByL2<FA_DECODE_PROMOTE_MAX_L2_MB>>;

}  // namespace

FA_EXPORT_DECODE_VARIANT(LaunchDecode, WidestTile)
