// Persistent CTAs fed from a queue (step 35): where the launch allows, the producer thread of each CTA
// takes the CTA's work tiles from a counter in global memory as the CTA frees up, heaviest first, and
// hands them to the consumers through shared memory (TileHandoff); elsewhere the kernel walks step
// 27's static list (tile_scheduler.cuh) as before, with no hand-off.
//
// Why a counter: a static list divides the launch's work by counting tiles, and whole tiles rarely
// divide evenly: a causal (1, 64, 8192, 128) call is 2048 heavy-light pairs of equal weight over 132
// CTAs, so 68 CTAs walk 16 pairs and 64 walk 15, and the launch ends 3.1 % after the mean CTA. Taken
// from a counter heaviest first, the last tiles are the lightest (causal: the first query tiles of
// a head, one key tile each) and the CTAs end within about one of them of each other; an SM that runs
// slow takes fewer tiles.
//
// Why only where the launch allows: heaviest first means every head at once (the last query tile of
// each head, then the one before), so the K/V the CTAs read at a moment is every head's. The order
// therefore goes in sections of (batch, head) matrices whose K/V fit two fifths of the L2 (20 MB of an
// H100's 50: one 24 MB section, GPT-2's twelve heads at S = 8192, ran 0.9 % slower than the static
// list, 16 MB sections faster), the query heads of one K/V head together (as fa::kv_head_index
// numbers them), heaviest first within a section. Only the last section's tail balances the CTAs;
// when it holds fewer than kQueueTilesPerCta tiles a CTA (multi-head D = 128 at long S: 5 heads of
// 4 MB, 320 tiles over 132 CTAs) its heavy tiles start late and the launch ends later than the
// static list's (2-5 % slower, measured), so such launches keep the static list
// (data/explorations/2026-11-26-longest-first-queue).
//
// The counter: each launch takes one pair of counters (next tile, CTAs done) of kTileQueueSlots,
// round-robin on the host, so launches on different streams do not share one; the CTA that finishes
// last puts its pair back to zero, so the next launch with that slot (a graph replay too) starts from
// zero. kTileQueueSlots launches would have to be in flight at once to share one.
#pragma once

#include <atomic>

#include "fa/common.cuh"
#include "fa/pipeline.cuh"
#include "fa/tile_scheduler.cuh"

// Two of step 35's ideas as knock-out switches of the sm_90a end's twin (the manifest's [[switch]] tables;
// every step builds them at 1): the order inside a section and the sections themselves.
#ifndef FA_QUEUE_HEAVIEST_FIRST  // 0 -> the counter hands a section's tiles out lightest first (the static order)
#define FA_QUEUE_HEAVIEST_FIRST 1
#endif
#ifndef FA_QUEUE_L2_SECTIONS  // 0 -> one section of every head, whatever the L2 holds
#define FA_QUEUE_L2_SECTIONS 1
#endif
// Step 65's rule (takes_fa3_sections_causal_d128): causal D = 128 calls of FA_QUEUE_FA3_SECTIONS_MIN_S keys or more
// take sections of FA_QUEUE_FA3_SECTION_MB MB of K/V (FlashAttention-3's size) and the counter from
// FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA tiles a CTA in the last section, instead of two fifths of the L2 and four.
#ifndef FA_QUEUE_FA3_SECTIONS_MIN_S
#define FA_QUEUE_FA3_SECTIONS_MIN_S 4096
#endif
#ifndef FA_QUEUE_FA3_SECTION_MB
#define FA_QUEUE_FA3_SECTION_MB 32
#endif
#ifndef FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA
#define FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA 3
#endif
// Step 71 (keeps_older_queue): below FA_QUEUE_OLDER_UNDER_S keys, a call step 65's rule takes keeps the older queue
// (two fifths of the L2, the counter from four tiles a CTA) where that queue takes the counter or walks at most
// FA_QUEUE_OLDER_UNDER_PAIRS of step 27's static heavy-light pairs a CTA.
#ifndef FA_QUEUE_OLDER_UNDER_S
#define FA_QUEUE_OLDER_UNDER_S 8192
#endif
#ifndef FA_QUEUE_OLDER_UNDER_PAIRS
#define FA_QUEUE_OLDER_UNDER_PAIRS 8
#endif
// Step 68: the counter's causal D = 64 tile (ONE_SECTION's, step 52) takes the same FA_QUEUE_FA3_SECTION_MB sections
// (launch_from_queue's FA3_SECTIONS_D64), from as many tiles a CTA in the last section as its own rule asks.

namespace fa {

constexpr int kTileQueueSlots = 1024;
// Tiles a CTA the last section must hold for the counter to balance the launch's end (see above).
constexpr int kQueueTilesPerCta = 4;
// TileQueue::from_counter's value where each CTA's second tile is the mirrored one (second_mirrored, step 64).
constexpr int kCounterSecondMirrored = 2;

namespace {  // one set of counters per variant library (each is one translation unit)

__device__ unsigned tile_queue_counters[2 * kTileQueueSlots];  // zero when the module loads

}  // namespace

template <int BR>
struct TileQueue {
  int m_blocks;       // query tiles per head
  int heads;          // B * H
  int section_heads;  // (batch, head) matrices a section: a multiple of H / H_kv (the last may have fewer)
  int total;          // work tiles in the launch
  int causal;
  int from_counter;  // 0: the kernel walks step 27's static list (the launch takes that kernel); 1: the counter;
                     // kCounterSecondMirrored: the counter, each CTA's second tile second_mirrored()
  int slot;          // this launch's counters: tile_queue_counters[2 * slot] (next), [2 * slot + 1] (done)

  // A CTA's first two tiles need no counter (the heaviest 2 x gridDim.x, one of each a CTA): CTA c
  // starts with tile c, then c + gridDim.x (none past the end).
  __device__ WorkTile first() const { return tile(static_cast<int>(blockIdx.x)); }
  __device__ WorkTile second() const { return tile(static_cast<int>(blockIdx.x + gridDim.x)); }
  // Step 64: the second round handed out in reverse, min(total, 2 x gridDim.x) - 1 - c (none where that falls in the
  // first round), so the CTA with the heaviest first tile gets the lightest second one, as step 27's heavy-light pairs
  // do: with second(), at two tiles a CTA, CTA 0 ran the two heaviest of a head and the launch ended 1.3x after a
  // balanced one (data/checks/2026-12-04-step63-counter-tile-causal-d64-draft, call 2).
  __device__ WorkTile second_mirrored() const {
    const int index = mirrored_second(total, static_cast<int>(gridDim.x), static_cast<int>(blockIdx.x));
    return index >= 0 ? tile(index) : WorkTile{-1, 0};
  }
  // The counter's index of CTA `cta`'s mirrored second tile in a launch of `total` tiles on `grid` CTAs; -1: none.
  __host__ __device__ static int mirrored_second(int total, int grid, int cta) {
    const int index = (total < 2 * grid ? total : 2 * grid) - 1 - cta;
    return index >= grid ? index : -1;
  }
  // The next tile from the counter (q0 < 0: none left).
  __device__ WorkTile take() const {
    return tile(static_cast<int>(atomicAdd(&tile_queue_counters[2 * slot], 1u) + 2 * gridDim.x));
  }
  // After the CTA's last take: the last CTA to get here zeroes the slot. Every take of the launch
  // has returned by then (a CTA retires after its own last take).
  __device__ void retire() const {
    if (atomicAdd(&tile_queue_counters[2 * slot + 1], 1u) == gridDim.x - 1) {
      atomicExch(&tile_queue_counters[2 * slot], 0u);
      atomicExch(&tile_queue_counters[2 * slot + 1], 0u);
    }
  }
  // Tile `index` of the counter's order: sections of heads, heaviest first within one, heads fastest;
  // q0 = -1 past the end.
  __host__ __device__ WorkTile tile(int index) const {
    if (index >= total) return {-1, 0};
    const int heads_a_section = FA_QUEUE_L2_SECTIONS ? section_heads : heads;
    const int per_section = heads_a_section * m_blocks;
    const int section = index / per_section;
    const int first_head = section * heads_a_section;
    const int size = min(heads_a_section, heads - first_head);
    const int rank = index - section * per_section;
    const int level = rank / size;  // 0: the heaviest query tile of every head in the section
    return {(causal && FA_QUEUE_HEAVIEST_FIRST ? m_blocks - 1 - level : level) * BR, first_head + rank % size};
  }
};

// The work tiles the producer thread takes, handed to the consumer warps: two entries, each with a
// full barrier (written) and an empty one (every consumer warp has read it), so entry e + 2 is
// written once e is read. q0 < 0: no more work.
struct TileHandoff {
  uint64_t full[2], empty[2];
  WorkTile tile[2];

  // One thread, before the __syncthreads that publishes the barriers.
  __device__ void init(int reading_warps) {
    for (int i = 0; i < 2; ++i) {
      mbarrier_init(&full[i], 1);
      mbarrier_init(&empty[i], reading_warps);
    }
  }
  __device__ void put(int entry, WorkTile work) {
    if (entry >= 2) mbarrier_wait(&empty[entry & 1], ((entry >> 1) - 1) & 1);  // entry - 2 has been read
    tile[entry & 1] = work;
    mbarrier_arrive(&full[entry & 1]);  // a release: the write above is seen by whoever waits
  }
  // The writer's own last put to `entry` (until it puts entry + 2).
  __device__ WorkTile written(int entry) const { return tile[entry & 1]; }
  // Every lane of a consumer warp: all wait (a warp-uniform loop), lane 0 reads and arrives (each
  // reader arrives itself, which is what compute-sanitizer's racecheck follows), the others take
  // its copy.
  __device__ WorkTile get(int entry, int lane) {
    mbarrier_wait(&full[entry & 1], (entry >> 1) & 1);
    WorkTile work{0, 0};
    if (lane == 0) {
      work = tile[entry & 1];
      mbarrier_arrive(&empty[entry & 1]);
    }
    return {__shfl_sync(0xffffffffu, work.q0, 0), __shfl_sync(0xffffffffu, work.bh, 0)};
  }
};

namespace {  // internal linkage, like fa::launch

// The queue of a launch of `grid` CTAs: sections of as many K/V heads as two fifths of the L2 hold (K
// and V of the whole sequence, at least one), split evenly, times the query heads a K/V head serves; the
// counter where the last section holds tiles_per_cta tiles a CTA (kQueueTilesPerCta; step 63's counter tile
// of causal D = 64 calls: as many as its tile rule asks, FA_TILE_COUNTER_TILE_CAUSAL_TILES_PER_SM_D64). one_section:
// every head in one section, whatever the L2 holds (step 52's three-warpgroup tile: too few tiles a section otherwise).
// mirror_under: a launch from the counter with fewer than that many tiles a CTA takes each CTA's second tile mirrored
// (kCounterSecondMirrored; step 64; 0: never). section_bytes: a section's K/V bytes where not two fifths of the L2
// (0; step 65's FA3 sections).
template <int BR>
TileQueue<BR> make_tile_queue(const AttnShape& shape, int D, int elem_bytes, long long l2_bytes, int grid, int slot,
                              bool one_section = false, int tiles_per_cta = kQueueTilesPerCta, int mirror_under = 0,
                              long long section_bytes = 0) {
  TileQueue<BR> queue;
  const int group = shape.H / shape.H_kv, kv_heads = shape.B * shape.H_kv;
  const long long fit = (section_bytes ? section_bytes : l2_bytes * 2 / 5) / (2LL * shape.S * D * elem_bytes);
  const int sections = FA_QUEUE_L2_SECTIONS && !one_section
                           ? ceil_div(kv_heads, fit < 1 ? 1 : fit > kv_heads ? kv_heads : static_cast<int>(fit))
                           : 1;
  const int kv_per_section = ceil_div(kv_heads, sections);
  queue.m_blocks = ceil_div(shape.S, BR);
  queue.heads = shape.B * shape.H;
  queue.section_heads = kv_per_section * group;
  queue.total = queue.m_blocks * queue.heads;
  queue.causal = shape.causal;
  const int last_section = queue.heads - (ceil_div(queue.heads, queue.section_heads) - 1) * queue.section_heads;
  queue.from_counter =
      static_cast<long long>(last_section) * queue.m_blocks >= static_cast<long long>(tiles_per_cta) * grid;
  if (queue.from_counter && static_cast<long long>(queue.total) < static_cast<long long>(mirror_under) * grid)
    queue.from_counter = kCounterSecondMirrored;
  queue.slot = slot;
  return queue;
}

// Step 65: a causal D = 128 call of FA_QUEUE_FA3_SECTIONS_MIN_S keys or more takes FlashAttention-3's sections of
// FA_QUEUE_FA3_SECTION_MB MB and the counter from FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA tiles a CTA: with two fifths of
// the L2 its last section held one to nine heads (0.97-2.2 tiles a CTA), under the counter's four, so it walked step
// 27's static pairs, whose last round is part empty.
inline bool takes_fa3_sections_causal_d128(const AttnShape& shape, int D) {
  return shape.causal && D == 128 && shape.S >= FA_QUEUE_FA3_SECTIONS_MIN_S;
}

// Step 71: whether a call that step 65's rule takes keeps the older queue instead (`older`: the queue it would make
// without step 65's sections, of `grid` CTAs). On three H100s, at 4096 keys, the older queue ran 1.008x-1.034x step
// 65's where it walked 1.9-7.8 static pairs a CTA and 1.014x-1.020x where it took the counter (grouped K/V of 32-96
// MB); from 9.7 pairs a CTA 0.994x-1.003x, and 0.982x at 31 (data/explorations/2026-12-06-causal-sections-h100).
template <int BR>
bool keeps_older_queue(const AttnShape& shape, const TileQueue<BR>& older, int grid) {
  return shape.S < FA_QUEUE_OLDER_UNDER_S &&
         (older.from_counter || static_cast<long long>(ceil_div(older.total, 2)) <=
                                    static_cast<long long>(FA_QUEUE_OLDER_UNDER_PAIRS) * grid);
}

// The queue launch_from_queue makes for a launch of `grid` CTAs (its template arguments of the same names; a host
// function, so that tests/test_tile_queue.py runs it): step 65's sections and tiles a CTA where
// takes_fa3_sections_causal_d128, unless OLDER_UNDER_PAIRS and keeps_older_queue (step 71); step 68's sections for the
// ONE_SECTION tile where FA3_SECTIONS_D64.
template <int BR, bool ONE_SECTION, int QUEUE_TILES_PER_CTA, int MIRROR_UNDER, bool FA3_SECTIONS, bool FA3_SECTIONS_D64,
          bool OLDER_UNDER_PAIRS = false>
TileQueue<BR> launch_queue(const AttnShape& shape, int D, int elem_bytes, long long l2_bytes, int grid, int slot) {
  if (FA3_SECTIONS && OLDER_UNDER_PAIRS && !ONE_SECTION && takes_fa3_sections_causal_d128(shape, D)) {
    const TileQueue<BR> older =
        make_tile_queue<BR>(shape, D, elem_bytes, l2_bytes, grid, slot, false, QUEUE_TILES_PER_CTA, MIRROR_UNDER);
    if (keeps_older_queue(shape, older, grid)) return older;
  }
  const bool fa3_sections = FA3_SECTIONS && takes_fa3_sections_causal_d128(shape, D);
  constexpr bool kD64Sections = ONE_SECTION && FA3_SECTIONS_D64;
  return make_tile_queue<BR>(shape, D, elem_bytes, l2_bytes, grid, slot, ONE_SECTION && !kD64Sections,
                             fa3_sections ? FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA : QUEUE_TILES_PER_CTA, MIRROR_UNDER,
                             fa3_sections || kD64Sections ? static_cast<long long>(FA_QUEUE_FA3_SECTION_MB) << 20 : 0);
}

// Launch a persistent kernel fed by a TileQueue: KERNELS are {the static list's kernel, the counter's};
// min(work tiles, SMs x Tile's CTAs per SM) CTAs from the counter, min(the list's items, that) from the
// static list (a heavy-light pair is one item), the queue passed before the shape. The switchable twin's
// knock-outs: Scheduler (step 27's pairs or single tiles), ONE_WAVE = false (one CTA per list item, as
// many waves as they need) and COUNTER = false (the static list at every launch). ONE_SECTION: the counter's
// order is one section of every head (make_tile_queue's one_section); QUEUE_TILES_PER_CTA, MIRROR_UNDER:
// make_tile_queue's tiles_per_cta and mirror_under. FA3_SECTIONS: step 65's sections where
// takes_fa3_sections_causal_d128. FA3_SECTIONS_D64: step 68, the ONE_SECTION tile in sections of
// FA_QUEUE_FA3_SECTION_MB MB of K/V instead of one: heaviest first over every head at once, the CTAs read all of the
// call's K/V at a time, 64 MB at (4, 16, 4096, 64, causal) against an H100's 50 MB of L2 (an H200's 60), and moved
// 3.0 times the inputs and output through DRAM, FlashAttention-3 1.1 times, this 1.4 times
// (data/explorations/2026-12-05-sections-counter-d64). OLDER_UNDER_PAIRS: step 71, launch_queue's.
template <class Tile, int D, template <int> class Scheduler = BalancedTileScheduler, bool ONE_WAVE = true,
          bool COUNTER = true, bool ONE_SECTION = false, int QUEUE_TILES_PER_CTA = kQueueTilesPerCta,
          int MIRROR_UNDER = 0, bool FA3_SECTIONS = false, bool FA3_SECTIONS_D64 = false,
          bool OLDER_UNDER_PAIRS = false, class... Params, class... Args>
int launch_from_queue(void (*const (&kernels)[2])(Params...), const AttnShape& shape, cudaStream_t stream,
                      Args... args) {
  int sms = 0, l2 = 0;
  if (int err = multiprocessor_count(&sms)) return err;
  if (int err = l2_cache_bytes(&l2)) return err;
  const long long tiles = static_cast<long long>(ceil_div(shape.S, Tile::BR)) * shape.B * shape.H;
  if (tiles > 0x3fffffff) return static_cast<int>(cudaErrorInvalidValue);  // tile indices are ints
  const int resident = sms * CtasPerSm<Tile>::value;
  const int grid = tiles < resident ? static_cast<int>(tiles) : resident;
  static std::atomic<unsigned> launches{0};
  const int slot = static_cast<int>(launches.fetch_add(1, std::memory_order_relaxed) % kTileQueueSlots);
  auto queue = launch_queue<Tile::BR, ONE_SECTION, QUEUE_TILES_PER_CTA, MIRROR_UNDER, FA3_SECTIONS, FA3_SECTIONS_D64,
                            OLDER_UNDER_PAIRS>(shape, D, sizeof(ElemOf<Tile>), l2, grid, slot);
  if (!COUNTER) queue.from_counter = 0;
  const auto kernel = kernels[queue.from_counter ? 1 : 0];
  if (int err = opt_in_shared_memory<Tile>(kernel)) return err;
  const int items = Scheduler<Tile::BR>(shape).items();
  const int static_grid = items < resident || !ONE_WAVE ? items : resident;
  kernel<<<queue.from_counter ? grid : static_grid, Tile::THREADS, Tile::smem_bytes(), stream>>>(args..., queue, shape);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

}  // namespace fa
