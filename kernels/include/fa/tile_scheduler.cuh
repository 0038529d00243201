// Persistent CTAs: the grid holds as many CTAs as the GPU keeps resident (SMs x CTAs per SM), and
// each CTA walks a list of work tiles (one query tile of one (batch, head)) instead of exiting
// after one. What a scheduler decides is which CTA takes which tile in which order; the CTAs of
// one round work on neighbouring query tiles of the same head, so they read that head's K/V from
// L2 rather than DRAM.
#pragma once

#include "fa/common.cuh"

namespace fa {

struct WorkTile {
  int q0;  // first query row
  int bh;  // batch * H + head: the (batch, head) matrix, as the tensor maps index it
};

// A CTA walks its work tiles with a cursor: start(), then next(cursor) while valid(cursor); the
// producer and the consumers walk the same sequence. Every scheduler below is static (the walk
// depends on blockIdx.x and the shape alone), so no CTA waits on another to learn its next tile.

// Round-robin over (batch, head, query tile), query tiles fastest: tile index i goes to CTA
// i % gridDim.x.
template <int BR>
struct StaticTileScheduler {
  int m_blocks;  // query tiles per head
  int total;     // work tiles in the launch

  __host__ __device__ explicit StaticTileScheduler(const AttnShape& shape)
      : m_blocks(ceil_div(shape.S, BR)), total(ceil_div(shape.S, BR) * shape.B * shape.H) {}

  __host__ __device__ int items() const { return total; }  // what the CTAs share out: the grid's upper bound
  __device__ int start() const { return blockIdx.x; }
  __device__ int next(int cursor) const { return cursor + gridDim.x; }
  __device__ bool valid(int cursor) const { return cursor < total; }
  __device__ WorkTile tile(int cursor) const { return {cursor % m_blocks * BR, cursor / m_blocks}; }
};

// Causal: query tile m has about m + 1 key tiles of work, so handing out single tiles round-robin
// gives some CTAs twice the work of others whenever gridDim.x and the tiles per head share a
// factor (132 CTAs and 8 tiles a head: CTA c takes only tiles c % 8 and (c + 4) % 8). Here the work
// item is a pair of one head's tiles, m_blocks - 1 - p (heavy, first) and p (light): every pair
// weighs m_blocks + 1 key tiles, so round-robin over pairs balances. Pairs of one head are
// neighbours, as in StaticTileScheduler. Non-causal shapes take single tiles, as there.
// The cursor is 2 * pair + (0: the heavy tile, 1: the light one).
template <int BR>
struct BalancedTileScheduler {
  int m_blocks;        // query tiles per head
  int items_per_head;  // pairs (causal) or tiles
  int total_items;
  bool paired;

  __host__ __device__ explicit BalancedTileScheduler(const AttnShape& shape)
      : m_blocks(ceil_div(shape.S, BR)),
        items_per_head(shape.causal ? (ceil_div(shape.S, BR) + 1) / 2 : ceil_div(shape.S, BR)),
        total_items((shape.causal ? (ceil_div(shape.S, BR) + 1) / 2 : ceil_div(shape.S, BR)) * shape.B * shape.H),
        paired(shape.causal) {}

  __host__ __device__ int items() const { return total_items; }
  __device__ int start() const { return 2 * blockIdx.x; }
  __device__ int next(int cursor) const {
    const int item = cursor >> 1;
    const int p = item % items_per_head;
    if (paired && !(cursor & 1) && m_blocks - 1 - p != p) return cursor + 1;  // the pair's light tile
    return 2 * (item + gridDim.x);
  }
  __device__ bool valid(int cursor) const { return (cursor >> 1) < total_items; }
  __device__ WorkTile tile(int cursor) const {
    const int item = cursor >> 1;
    const int p = item % items_per_head;
    const int m = !paired || (cursor & 1) ? p : m_blocks - 1 - p;
    return {m * BR, item / items_per_head};
  }
};

namespace {  // internal linkage, like fa::launch

// Launch a persistent kernel: min(work items, SMs x Tile's CTAs per SM) CTAs in one dimension,
// so that every CTA has at least one item. ONE_WAVE = false (a knock-out of persistence) launches
// one CTA per work item instead, as many waves as the items need.
template <class Tile, template <int> class Scheduler, bool ONE_WAVE = true, class... Params, class... Args>
int launch_persistent(void (*kernel)(Params...), const AttnShape& shape, cudaStream_t stream, Args... args) {
  if (int err = opt_in_shared_memory<Tile>(kernel)) return err;
  int sms = 0;
  if (int err = multiprocessor_count(&sms)) return err;
  // Cursors are ints (a pair scheduler's up to twice the tiles): refuse shapes that would overflow.
  if (static_cast<long long>(ceil_div(shape.S, Tile::BR)) * shape.B * shape.H > 0x3fffffff)
    return static_cast<int>(cudaErrorInvalidValue);
  const int items = Scheduler<Tile::BR>(shape).items();
  const int resident = sms * CtasPerSm<Tile>::value;
  kernel<<<items < resident || !ONE_WAVE ? items : resident, Tile::THREADS, Tile::smem_bytes(), stream>>>(args..., shape);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

}  // namespace fa
