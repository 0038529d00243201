// Step 70 - +L2 promotion by GPU: the cache's tensor maps promote each request to 256 bytes on a GPU of at most
// FA_DECODE_PROMOTE_MAX_L2_MB MB of L2 (an H100's 50), and ask for what a box reads elsewhere (step 45's choice, an
// H200's 60 MB). Everything else as step 57.
// Hypothesis: step 45 measured no promotion faster on an H200 (0.7-7.3 % hot at the D = 128 set shapes in run
// 20261128T180707Z-4d2adc9: the L2 hit rate fell from 25 % to 1.7 % and DRAM throughput rose from 81.7 % to 85.3 % of
// peak), but on an H100 the same step is slower than its parent at every D = 128 shape, hot and cold (0.959x-0.999x
// in run 20261205T192124Z-f585548; data/explorations/2026-12-06-decode-l2-promotion): there a box's 256-byte request
// brings the next box's half-line in ahead, and the H100's HBM3 does not reach the H200's DRAM efficiency without it.
// The GPU's L2 size stands for which of the two it is (the two GPUs the study has measured); any other GPU takes the
// side of its L2 size, a guess until it is measured.
// Predicted: 1.005-1.06x over step 57 on the H100 at the batch-64 calls of 1,024 tokens, 0.99-1.04x at the mixed
// batches, 1.00-1.03x at the paged call, 0.97-1.01x at the batch-8 calls of 8,192 and batch 1 at 128k, Falcon-7B's
// 1.00x hot and 0.95-1.01x cold; on the H200 1.00x +- 0.01 everywhere (the same kernels and maps as step 57).
// Narrowed from the exploration's calls 1 on two H100s, where 256-byte promotion ran 1.006-1.056x step 57's speed at
// the batch-64 calls and 0.990-1.037x at the mixed batches, and from this step's call there (1.028-1.046x and
// 1.029-1.035x; data/explorations/2026-12-06-decode-l2-promotion/step70-h100b).
#include "fa/decode_launch.cuh"

#ifndef FA_DECODE_PROMOTE_MAX_L2_MB
#define FA_DECODE_PROMOTE_MAX_L2_MB 52
#endif

namespace {

struct WideRule {  // step 56's, as step 57
  static bool takes_row_blocks(long long pairs, long long wave, long long, int capacity, int BC,
                               fa::SplitPartials& p) {
    return fa::wide_group_fills_one_wave(pairs, wave, capacity, BC, p);
  }
};

template <class Elem, int D>
using LaunchDecode =
    LaunchDecodeWide<Elem, D, WideRule, /*PREFETCH_MAPS=*/true, PromotionByL2<FA_DECODE_PROMOTE_MAX_L2_MB>>;

}  // namespace

FA_EXPORT_DECODE_VARIANT(LaunchDecode, WidestTile)
