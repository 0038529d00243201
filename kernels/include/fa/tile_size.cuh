// The tiles each branch's current kernels take, per head dim, in one place (as FlashAttention-3's
// hopper/tile_size.h does). A step whose idea was a tile (13: two CTAs per SM at D = 64, 16: wide
// K/V tiles at D = 128, 20: two m-tiles, 33: three CTAs per SM at D = 64, ...) changed it in its own
// file; the kernels that settled on a branch's tile since (the Hopper branch's persistent steps, its
// end's switchable twin, the portable branch's end and its twin) take it from here, and the Hopper
// steps after 33 also which tile a call takes (run_hopper_tile). An FA_TILE_* macro overrides one
// constant for a tuning trial or a knock-out (the manifest's [[tunable]] and [[switch]] tables).
#pragma once

#include "fa/mma_attention.cuh"
#include "fa/wgmma_attention.cuh"

#include <type_traits>

#ifndef FA_TILE_BC_D64  // Hopper, D = 64: keys per K/V tile
#define FA_TILE_BC_D64 128
#endif
#ifndef FA_TILE_STAGES_D64  // K/V ring depth
#define FA_TILE_STAGES_D64 3
#endif
#ifndef FA_TILE_WGS_D64  // consumer warpgroups of 64 query rows (1: two CTAs per SM)
#define FA_TILE_WGS_D64 1
#endif
#ifndef FA_TILE_BC_D64_LONG  // Hopper, D = 64, sequences of FA_TILE_LONG_S_D64 keys or more (step 32)
#define FA_TILE_BC_D64_LONG 192
#endif
#ifndef FA_TILE_STAGES_D64_LONG
#define FA_TILE_STAGES_D64_LONG 2
#endif
#ifndef FA_TILE_LONG_S_D64
#define FA_TILE_LONG_S_D64 4096
#endif
#ifndef FA_TILE_BC_D64_THREE  // Hopper, D = 64, three CTAs per SM (step 33): keys per K/V tile
#define FA_TILE_BC_D64_THREE 128
#endif
#ifndef FA_TILE_STAGES_D64_THREE
#define FA_TILE_STAGES_D64_THREE 2
#endif
#ifndef FA_TILE_THREE_S_MAX_D64  // sequences this long or longer keep step 32's tiles
#define FA_TILE_THREE_S_MAX_D64 8192
#endif
#ifndef FA_TILE_THREE_TILES_PER_SM_D64  // 64-row work tiles per SM a grid needs for three CTAs an SM
#define FA_TILE_THREE_TILES_PER_SM_D64 10
#endif
#ifndef FA_TILE_THREE_WGS_MIN_S_D64  // Hopper, D = 64, three consumer warpgroups a CTA (step 49): shortest S
#define FA_TILE_THREE_WGS_MIN_S_D64 2048
#endif
#ifndef FA_TILE_THREE_WGS_TILES_PER_SM_D64  // 192-row work tiles per SM a grid needs for them
#define FA_TILE_THREE_WGS_TILES_PER_SM_D64 8
#endif
#ifndef FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64  // ... for causal calls (step 51): shortest S
#define FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64 4096
#endif
#ifndef FA_TILE_OVERLAPPED_CAUSAL_MIN_S_D64  // step 69: the shortest S for the counter's causal tile, overlapped
#define FA_TILE_OVERLAPPED_CAUSAL_MIN_S_D64 2048  // since step 59 (hopper_tile_kind's OVERLAPPED_MIN_S)
#endif
#ifndef FA_TILE_THREE_WGS_CAUSAL_FILL_D64  // ... and how full, in percent, the pairs leave the last round
#define FA_TILE_THREE_WGS_CAUSAL_FILL_D64 95
#endif
#ifndef FA_TILE_THREE_WGS_QUEUE_TILES_PER_SM_D64  // ... from the counter (step 52): 192-row work tiles per SM
#define FA_TILE_THREE_WGS_QUEUE_TILES_PER_SM_D64 4  // a causal call needs (step 35's kQueueTilesPerCta)
#endif
#ifndef FA_TILE_COUNTER_TILE_CAUSAL_TILES_PER_SM_D64  // step 63: 192-row work tiles per SM a causal call must pass
#define FA_TILE_COUNTER_TILE_CAUSAL_TILES_PER_SM_D64 2  // to take step 52's tile (and its counter) before step 51's rule
#endif
#ifndef FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64  // step 64: 192-row work tiles per SM from which a causal call takes
#define FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64 2     // step 52's tile (and its counter), the second round mirrored
#endif
#ifndef FA_TILE_MIRRORED_UNDER_TILES_PER_CTA_D64  // ... under this many tiles a CTA (TileQueue::second_mirrored)
#define FA_TILE_MIRRORED_UNDER_TILES_PER_CTA_D64 3
#endif
#ifndef FA_TILE_STAGES_D64_THREE_WGS  // the three-warpgroup tile's K/V stages on the static list from step 53 on
#define FA_TILE_STAGES_D64_THREE_WGS 2     // (before it, and from the counter, FA_TILE_STAGES_D64)
#endif
#ifndef FA_TILE_BC_D128  // Hopper, D = 128
#define FA_TILE_BC_D128 128
#endif
#ifndef FA_TILE_STAGES_D128
#define FA_TILE_STAGES_D128 3
#endif
#ifndef FA_TILE_WGS_D128
#define FA_TILE_WGS_D128 2
#endif
#ifndef FA_TILE_PRODUCER_WARPS  // the producer warpgroup's warps (setmaxnreg needs all four)
#define FA_TILE_PRODUCER_WARPS 4
#endif

namespace fa {

// Hopper (sm_90a): one consumer warpgroup and two CTAs per SM at D = 64, two warpgroups taking
// turns at D = 128; 128-key K/V tiles in a three-stage ring. TMA_KV = false (a knock-out: the
// producer copies K/V with cp.async) keeps 40 registers for the producer (56 beside two consumer
// warpgroups: a persistent producer's copy loop spills at 40), which TMA does not need.
// Elem: the 16-bit input type (half; __nv_bfloat16 in the steps that take it), the same tile.
// The helpers give what follows from the consumer warpgroups: two CTAs per SM with one, else one;
// the producer's registers after setmaxnreg.
constexpr int hopper_consumer_warpgroups(int D) { return D == 64 ? FA_TILE_WGS_D64 : FA_TILE_WGS_D128; }
constexpr int hopper_ctas_per_sm(int wgs) { return wgs == 1 ? 2 : 1; }
constexpr int hopper_producer_registers(int wgs, bool tma_kv) {
  return tma_kv && wgs == 1 ? 24 : tma_kv || wgs == 1 ? 40 : 56;
}

template <int D, bool TMA_KV = true, class Elem = half>
using HopperTile = WgmmaTile<D, /*BC=*/D == 64 ? FA_TILE_BC_D64 : FA_TILE_BC_D128,
                             /*KV_STAGES=*/D == 64 ? FA_TILE_STAGES_D64 : FA_TILE_STAGES_D128,
                             FA_TILE_PRODUCER_WARPS, hopper_consumer_warpgroups(D),
                             hopper_ctas_per_sm(hopper_consumer_warpgroups(D)),
                             hopper_producer_registers(hopper_consumer_warpgroups(D), TMA_KV), Elem>;

// Hopper, D = 64 and long sequences (step 32): 192-key K/V tiles in two stages, the same shared
// memory as three stages of 128 keys (so two CTAs still share an SM), the same warpgroups. Fewer,
// wider key tiles pay each tile's fixed cost (the waits on S and on P V, the row maxima's shuffles,
// O's rescale) less often; at short S the last tile's masked keys cost more than that saves.
template <bool TMA_KV = true, class Elem = half>
using HopperLongTileD64 = WgmmaTile<64, FA_TILE_BC_D64_LONG, FA_TILE_STAGES_D64_LONG, FA_TILE_PRODUCER_WARPS,
                                    FA_TILE_WGS_D64, hopper_ctas_per_sm(FA_TILE_WGS_D64),
                                    hopper_producer_registers(FA_TILE_WGS_D64, TMA_KV), Elem>;

// Whether a D = 64 call of step 32 and later takes HopperLongTileD64.
constexpr bool takes_long_tile_d64(int S) { return S >= FA_TILE_LONG_S_D64; }

// Hopper, D = 64, three CTAs per SM (step 33): one producer and one consumer warpgroup each, as
// HopperTile, with 128-key tiles in two stages (73 KB of shared memory a CTA). The launch bound
// gives 80 registers a thread, so after the producer's setmaxnreg to 24 the consumer has 136: S is
// issued as N = 64 wgmmas (WgmmaTile::SPLIT_SCORES) and the kernel masks with one bound per row
// (mma_online_softmax's ROW_LIMIT), or ptxas spills. Twelve consumer warps an SM (three a
// sub-partition, not two) hide the softmax's latency chains.
template <bool TMA_KV = true, class Elem = half>
using HopperThreeCtaTileD64 = WgmmaTile<64, FA_TILE_BC_D64_THREE, FA_TILE_STAGES_D64_THREE, FA_TILE_PRODUCER_WARPS,
                                        /*CONSUMER_WARPGROUPS=*/1, /*CTAS_PER_SM=*/3,
                                        hopper_producer_registers(1, TMA_KV), Elem>;

// Whether a D = 64 call of step 33 takes HopperThreeCtaTileD64: sequences shorter than
// FA_TILE_THREE_S_MAX_D64 (from there the 192-key tile is faster) whose grid gives every SM
// FA_TILE_THREE_TILES_PER_SM_D64 64-row work tiles or more. With fewer, each CTA of three runs
// slower than one of two and the last wave stays part empty: 0.85x-1.01x at 4-8 tiles an SM.
inline bool takes_three_cta_tile_d64(const AttnShape& shape, int sms) {
  const long long work_tiles = static_cast<long long>(ceil_div(shape.S, 64)) * shape.B * shape.H;
  return shape.S < FA_TILE_THREE_S_MAX_D64 && work_tiles >= static_cast<long long>(FA_TILE_THREE_TILES_PER_SM_D64) * sms;
}

// Hopper, D = 64, three consumer warpgroups a CTA (step 49): 192 query rows share each K/V tile, as
// FlashAttention-3's D = 64 tile has, one CTA an SM, 128-key tiles in three stages (120 KB of shared memory).
// The producer keeps 40 registers, so a consumer has 152 (the launch bound gives 128 a thread): 3-4 % faster
// than 160 with the same main loop (410 instructions a warp per 128 keys either way; one H200,
// data/explorations/2026-11-29-three-wgs-d64 call 2), and the fewest without spills (144 spill 32 B).
// Its kernel walks the static list (the counter's kernel would spill 8 B at 152): non-causal tiles are of
// equal length, and a causal call takes it only where the heavy-light pairs fill the last round (step 51).
// STAGES: its K/V ring; three (FA_TILE_STAGES_D64) until step 53 gives it two (FA_TILE_STAGES_D64_THREE_WGS, 88 KB).
template <bool TMA_KV = true, class Elem = half, int STAGES = FA_TILE_STAGES_D64>
using HopperThreeWgTileD64 = WgmmaTile<64, FA_TILE_BC_D64, STAGES, FA_TILE_PRODUCER_WARPS,
                                       /*CONSUMER_WARPGROUPS=*/3, /*CTAS_PER_SM=*/1, TMA_KV ? 40 : 56, Elem>;

// Whether a D = 64 call of step 49 takes HopperThreeWgTileD64: non-causal sequences of
// FA_TILE_THREE_WGS_MIN_S_D64 keys or more (shorter ones leave much of the last 192-row tile empty) whose grid
// gives every SM FA_TILE_THREE_WGS_TILES_PER_SM_D64 192-row work tiles or more.
inline bool takes_three_wg_tile_d64(const AttnShape& shape, int sms) {
  const long long work_tiles =
      static_cast<long long>(ceil_div(shape.S, HopperThreeWgTileD64<>::BR)) * shape.B * shape.H;
  return !shape.causal && shape.S >= FA_TILE_THREE_WGS_MIN_S_D64 &&
         work_tiles >= static_cast<long long>(FA_TILE_THREE_WGS_TILES_PER_SM_D64) * sms;
}

// Whether a causal D = 64 call of step 51 takes HopperThreeWgTileD64: S of FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64 keys or
// more (shorter calls keep step 33's three CTAs an SM) whose heavy-light pairs of 192-row tiles (step 27's static
// list, ceil(m_blocks / 2) a head, one CTA an SM) fill the launch's last round at least
// FA_TILE_THREE_WGS_CAUSAL_FILL_D64 percent: pairs over CTAs, over that ratio's ceiling. A round part full leaves
// its CTAs' SMs idle at the end, and a pair of 192-row tiles is three times step 32's 64-row work item.
inline bool takes_three_wg_tile_causal_d64(const AttnShape& shape, int sms) {
  if (!shape.causal || shape.S < FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64) return false;
  const long long pairs =
      static_cast<long long>(ceil_div(ceil_div(shape.S, HopperThreeWgTileD64<>::BR), 2)) * shape.B * shape.H;
  const long long ctas = pairs < sms ? pairs : sms;
  const long long rounds = (pairs + ctas - 1) / ctas;
  return pairs * 100 >= static_cast<long long>(FA_TILE_THREE_WGS_CAUSAL_FILL_D64) * rounds * ctas;
}

// Hopper, D = 64, three consumer warpgroups fed from step 35's counter (step 52): HopperThreeWgTileD64 with the
// producer at 24 registers, so a consumer has 160: the counter's kernel spills 8 B at 152 (two S fragments
// around the first loop's P V wgmma), the static list's does not (and is 1-3 % faster at 152).
template <bool TMA_KV = true, class Elem = half>
using HopperThreeWgQueueTileD64 = WgmmaTile<64, FA_TILE_BC_D64, FA_TILE_STAGES_D64, FA_TILE_PRODUCER_WARPS,
                                            /*CONSUMER_WARPGROUPS=*/3, /*CTAS_PER_SM=*/1, TMA_KV ? 24 : 56, Elem>;

// Whether a causal D = 64 call of step 52 takes HopperThreeWgQueueTileD64: the calls of S >=
// FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64 that step 51 leaves because the static pairs fill the last round less than
// FA_TILE_THREE_WGS_CAUSAL_FILL_D64 percent, where the launch has FA_TILE_THREE_WGS_QUEUE_TILES_PER_SM_D64 192-row
// tiles an SM or more: the counter, heaviest first over every head at once, then ends the launch within one light
// tile (the launch takes it in one section: fa::launch_from_queue's ONE_SECTION).
inline bool takes_three_wg_queue_tile_causal_d64(const AttnShape& shape, int sms) {
  if (!shape.causal || shape.S < FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64 || takes_three_wg_tile_causal_d64(shape, sms))
    return false;
  const long long tiles =
      static_cast<long long>(ceil_div(shape.S, HopperThreeWgQueueTileD64<>::BR)) * shape.B * shape.H;
  return tiles >= static_cast<long long>(FA_TILE_THREE_WGS_QUEUE_TILES_PER_SM_D64) * sms;
}

// The 192-row work tiles of a causal D = 64 call of min_s keys or more (step 69 passes
// FA_TILE_OVERLAPPED_CAUSAL_MIN_S_D64 to the counter's rules below); 0 for any other.
inline long long long_causal_d64_tiles(const AttnShape& shape, int min_s = FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64) {
  if (!shape.causal || shape.S < min_s) return 0;
  return static_cast<long long>(ceil_div(shape.S, HopperThreeWgQueueTileD64<>::BR)) * shape.B * shape.H;
}

// Whether a causal D = 64 call of step 63 takes HopperThreeWgQueueTileD64: S of FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64 keys
// or more and more than FA_TILE_COUNTER_TILE_CAUSAL_TILES_PER_SM_D64 192-row tiles an SM, whatever step 51's pairs
// would fill: since step 59 overlaps the counter's tile, it runs the calls step 51's static tile took in two rounds of
// pairs or more 4-8 % faster (data/explorations/2026-12-04-causal-schedule-step62, calls 4-5), and the launch takes
// the counter from as many tiles a CTA (fa::launch_from_queue's QUEUE_TILES_PER_CTA). Not at exactly two tiles an
// SM: a CTA's first two tiles are fixed (TileQueue::first, second: c and c + grid, the heavy with the heavy), and
// one round of step 51's pairs ran 1.30x faster there (data/checks/2026-12-04-step63-counter-tile-causal-d64-draft).
inline bool takes_counter_tile_causal_d64(const AttnShape& shape, int sms,
                                          int min_s = FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64) {
  return long_causal_d64_tiles(shape, min_s) >
         static_cast<long long>(FA_TILE_COUNTER_TILE_CAUSAL_TILES_PER_SM_D64) * sms;
}

// Whether a causal D = 64 call of step 64 takes HopperThreeWgQueueTileD64: as step 63's rule, from
// FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64 192-row tiles an SM on (inclusive): with the second round mirrored a launch of
// two tiles a CTA is step 27's heavy-light pairs on the overlapped tile.
inline bool takes_mirrored_counter_tile_causal_d64(const AttnShape& shape, int sms,
                                                   int min_s = FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64) {
  const long long tiles = long_causal_d64_tiles(shape, min_s);
  return tiles > 0 && tiles >= static_cast<long long>(FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64) * sms;
}

// The tiles a Hopper call can take: kShort (HopperTile), and at D = 64 kLong (HopperLongTileD64, S >=
// FA_TILE_LONG_S_D64, step 32), kThreeCtas (HopperThreeCtaTileD64, takes_three_cta_tile_d64, step 33) and
// kThreeWgs (HopperThreeWgTileD64, takes_three_wg_tile_d64, step 49; causal: step 51) and kThreeWgsQueue
// (HopperThreeWgQueueTileD64, takes_three_wg_queue_tile_causal_d64, step 52). TMA_KV as HopperTile's; THREE_WGS_STAGES
// the K/V stages of kThreeWgs (HopperThreeWgTileD64's STAGES).
enum class HopperTileKind { kShort, kLong, kThreeCtas, kThreeWgs, kThreeWgsQueue };
template <class Elem, int D, HopperTileKind KIND = HopperTileKind::kShort, bool TMA_KV = true,
          int THREE_WGS_STAGES = FA_TILE_STAGES_D64>
using HopperTileOf = std::conditional_t<
    KIND == HopperTileKind::kLong, HopperLongTileD64<TMA_KV, Elem>,
    std::conditional_t<KIND == HopperTileKind::kThreeCtas, HopperThreeCtaTileD64<TMA_KV, Elem>,
                       std::conditional_t<KIND == HopperTileKind::kThreeWgs,
                                          HopperThreeWgTileD64<TMA_KV, Elem, THREE_WGS_STAGES>,
                                          std::conditional_t<KIND == HopperTileKind::kThreeWgsQueue,
                                                             HopperThreeWgQueueTileD64<TMA_KV, Elem>,
                                                             HopperTile<D, TMA_KV, Elem>>>>>;

// The tile a Hopper call takes, decided here for the steps after 33 and their twin (FlashAttention-3's
// tile_size_fwd_sm90), on a GPU of `sms` SMs: a host function, so that tests/test_tile_rules.py runs it without a GPU.
// THREE_CTAS, LONG_D64, THREE_WGS: whether the kernel has those tiles (a knock-out takes one away; steps 33-48 have no
// three-warpgroup tile); THREE_WGS_CAUSAL: whether causal calls may take the three-warpgroup tile (step 51 on);
// THREE_WGS_QUEUE: whether the causal calls it leaves take it from the counter (step 52 on); COUNTER_TILE_CAUSAL:
// whether every long causal call takes the counter's tile and none the static one (takes_counter_tile_causal_d64,
// step 63 on). MIRRORED: step 64's count (takes_mirrored_counter_tile_causal_d64) for step 63's. OVERLAPPED_MIN_S:
// step 69, the counter's rule (63's or 64's) from FA_TILE_OVERLAPPED_CAUSAL_MIN_S_D64 keys instead of
// FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64: step 51 set 4096 on its tile's hot timings, before step 59 overlapped the
// 192-row tiles; since, the counter's tile runs the models' causal calls of 2048 keys 3-4 % faster than step 33's
// three CTAs an SM (data/explorations/2026-12-05-sections-counter-d64). Steps 51's and 52's rules, which take calls
// of fewer tiles, keep FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64 (not measured under it).
namespace {  // internal linkage: an instantiation reads FA_TILE_* macros, which differ between variant libraries

template <int D, bool THREE_CTAS = true, bool LONG_D64 = true, bool THREE_WGS = false, bool THREE_WGS_CAUSAL = false,
          bool THREE_WGS_QUEUE = false, bool COUNTER_TILE_CAUSAL = false, bool MIRRORED = false,
          bool OVERLAPPED_MIN_S = false>
inline HopperTileKind hopper_tile_kind(const AttnShape& shape, int sms) {
  using Kind = HopperTileKind;
  if constexpr (D == 64) {
    constexpr bool kQueueCausal = THREE_WGS && THREE_WGS_CAUSAL && THREE_WGS_QUEUE;
    static_assert(!COUNTER_TILE_CAUSAL || kQueueCausal, "step 63's rule sends causal calls to step 52's tile");
    constexpr int kCounterMinS =
        OVERLAPPED_MIN_S ? FA_TILE_OVERLAPPED_CAUSAL_MIN_S_D64 : FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64;
    if constexpr (COUNTER_TILE_CAUSAL)  // before step 51's rule: the calls it leaves keep step 62's tiles
      if (MIRRORED ? takes_mirrored_counter_tile_causal_d64(shape, sms, kCounterMinS)
                   : takes_counter_tile_causal_d64(shape, sms, kCounterMinS))
        return Kind::kThreeWgsQueue;
    if constexpr (THREE_WGS)
      if (takes_three_wg_tile_d64(shape, sms) || (THREE_WGS_CAUSAL && takes_three_wg_tile_causal_d64(shape, sms)))
        return Kind::kThreeWgs;
    if constexpr (kQueueCausal)
      if (takes_three_wg_queue_tile_causal_d64(shape, sms)) return Kind::kThreeWgsQueue;
    if constexpr (THREE_CTAS)
      if (takes_three_cta_tile_d64(shape, sms)) return Kind::kThreeCtas;
    if constexpr (LONG_D64)
      if (takes_long_tile_d64(shape.S)) return Kind::kLong;
  }
  return Kind::kShort;
}

}  // namespace

// Runs the tile hopper_tile_kind chooses (its template arguments, in its order): run_tile(std::integral_constant<
// HopperTileKind, K>{}) is called with the kind, and only the kinds the kernel can take are instantiated. Returns
// run_tile's result, or the error of reading the SM count.
template <int D, bool THREE_CTAS = true, bool LONG_D64 = true, bool THREE_WGS = false, bool THREE_WGS_CAUSAL = false,
          bool THREE_WGS_QUEUE = false, bool COUNTER_TILE_CAUSAL = false, bool MIRRORED = false,
          bool OVERLAPPED_MIN_S = false, class RunTile>
inline int run_hopper_tile(const AttnShape& shape, RunTile&& run_tile) {
  using Kind = HopperTileKind;
  if constexpr (D == 64) {
    int sms = 0;
    if (int err = multiprocessor_count(&sms)) return err;
    switch (hopper_tile_kind<D, THREE_CTAS, LONG_D64, THREE_WGS, THREE_WGS_CAUSAL, THREE_WGS_QUEUE, COUNTER_TILE_CAUSAL,
                             MIRRORED, OVERLAPPED_MIN_S>(shape, sms)) {
      case Kind::kThreeWgsQueue:
        if constexpr (THREE_WGS && THREE_WGS_CAUSAL && THREE_WGS_QUEUE)
          return run_tile(std::integral_constant<Kind, Kind::kThreeWgsQueue>{});
        break;
      case Kind::kThreeWgs:
        if constexpr (THREE_WGS) return run_tile(std::integral_constant<Kind, Kind::kThreeWgs>{});
        break;
      case Kind::kThreeCtas:
        if constexpr (THREE_CTAS) return run_tile(std::integral_constant<Kind, Kind::kThreeCtas>{});
        break;
      case Kind::kLong:
        if constexpr (LONG_D64) return run_tile(std::integral_constant<Kind, Kind::kLong>{});
        break;
      case Kind::kShort:
        break;
    }
  }
  return run_tile(std::integral_constant<Kind, Kind::kShort>{});
}

// Portable (sm_80 and later): MT 16-row m-tiles per consumer warp (2; 1 for grids smaller than the
// GPU), no producer warp; D = 128 with two m-tiles takes 32 keys a tile (three stages: still 64
// keys in flight ahead): with 64, S (64 registers) beside O (128) and the Q fragments spills.
template <int D, int MT = 2, class Elem = half>
using PortableTile = MmaTile<D, /*KV_STAGES=*/D == 64 ? 4 : 3, /*PRODUCER_WARPS=*/0, /*ASYNC_ARRIVE=*/false,
                             /*M_TILES=*/MT, /*CTAS_PER_SM=*/1, /*BC=*/D == 64 || MT == 1 ? 64 : 32, Elem>;

}  // namespace fa
