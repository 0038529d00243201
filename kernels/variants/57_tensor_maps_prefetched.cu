// Step 57 - +tensor maps prefetched: each decode kernel's producer asks for its K and V tensor maps
// (prefetch.tensormap) first thing, before the sequence's length, the barriers and Q, instead of at its first box
// (fa::tma::prefetch_map; FlashAttention-3's producers begin so: 924 UTMACCTL.PF in its library's SASS, none in
// steps 44-56's). Everything else as step 56.
// Hypothesis: the copy engine reads a tensor map's 128 bytes from the kernel's parameters when the first box that
// names it is asked for, and every CTA's first box waits for that read, after the length's load from global memory
// and the barriers' init; a decode call lasts 10-80 us in one or two rounds of CTAs, so a read on every CTA's path
// (the longer where it misses the L2) is a per cent or so of the call, more when the L2 starts cold. Prefetched at
// the kernel's entry, the read overlaps the length's load, and the first box finds the map at hand.
// Predicted: 1.00-1.03x over step 56 at every set shape, hot and cold, the most at the short calls (Falcon-7B's and
// the batch-64 rows of 1,024 tokens, 14-80 us) and cold; within 0.99-1.01x at the long calls (128k tokens).
#include "fa/decode_launch.cuh"

namespace {

// A wide call takes the 16-row tile's row blocks with the most chunks whose CTAs fit one wave of that tile, where
// one chunk fits and the chunks are at most 2,048 keys (step 56's rule).
struct WideRule {
  static bool takes_row_blocks(long long pairs, long long wave, long long, int capacity, int BC,
                               fa::SplitPartials& p) {
    return fa::wide_group_fills_one_wave(pairs, wave, capacity, BC, p);
  }
};

template <class Elem, int D>
using LaunchDecode = LaunchDecodeWide<Elem, D, WideRule, /*PREFETCH_MAPS=*/true>;

}  // namespace

FA_EXPORT_DECODE_VARIANT(LaunchDecode, WidestTile)
