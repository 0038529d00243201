// Warp specialization: producer warps stream K/V tiles into a ring of KV_STAGES shared-memory
// stages with cp.async while consumer warps compute on the stage before.
//
// Hand-off uses named barriers (bar.sync / bar.arrive), two per stage:
//   FULL[s]:  producers arrive once stage s holds its tile; consumers sync on it before reading.
//   EMPTY[s]: consumers arrive once done with stage s; producers sync on it before refilling.
// bar.arrive does not wait, so neither side stalls unless the other is really behind.
#pragma once

#include "fa/common.cuh"

namespace fa {

// Barrier 0 is __syncthreads. IDs 1..2*STAGES are FULL/EMPTY; the last one is for consumers only.
constexpr int kBarrierFullBase = 1;
constexpr int kBarrierEmptyBase = 5;
constexpr int kBarrierConsumers = 9;

__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// 16-byte global -> shared copy that bypasses registers (and L1: .cg). src_bytes = 0 writes zeros.
__device__ __forceinline__ void cp_async_16(void* dst_smem, const void* src, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(dst_smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit_and_wait_all() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_all;\n" ::: "memory");
}

// The cp.async twin of load_tile_vec16; zero-fills rows at or past rows_valid.
template <int ROWS, int D, int LD, int THREADS>
__device__ __forceinline__ void cp_async_tile(half* dst, const half* src, int rows_valid, int tid) {
  constexpr int CHUNKS_PER_ROW = D / 8;
  for (int c = tid; c < ROWS * CHUNKS_PER_ROW; c += THREADS) {
    const int r = c / CHUNKS_PER_ROW, col = (c % CHUNKS_PER_ROW) * 8;
    const bool valid = r < rows_valid;
    cp_async_16(dst + r * LD + col, valid ? src + r * D + col : src, valid);
  }
}

// The producer side: fill stage (tile % KV_STAGES) with K and V of every tile in turn.
// T provides BC, D, LD, KV_STAGES, THREADS, PRODUCER_WARPS and Smem::{k,v}_stage.
template <class T>
__device__ void produce_kv_tiles(const typename T::Smem& sm, const half* k_head, const half* v_head,
                                 const AttnShape& shape, int n_tiles, int producer_tid) {
  constexpr int PRODUCER_THREADS = 32 * T::PRODUCER_WARPS;
  for (int tile = 0; tile < n_tiles; ++tile) {
    const int stage = tile % T::KV_STAGES;
    if (tile >= T::KV_STAGES) named_barrier_sync(kBarrierEmptyBase + stage, T::THREADS);
    const int kv0 = tile * T::BC;
    const size_t offset = static_cast<size_t>(kv0) * T::D;
    cp_async_tile<T::BC, T::D, T::LD, PRODUCER_THREADS>(sm.k_stage(stage), k_head + offset,
                                                         shape.S - kv0, producer_tid);
    cp_async_tile<T::BC, T::D, T::LD, PRODUCER_THREADS>(sm.v_stage(stage), v_head + offset,
                                                         shape.S - kv0, producer_tid);
    cp_async_commit_and_wait_all();
    named_barrier_arrive(kBarrierFullBase + stage, T::THREADS);
  }
}

// The consumer side: wait until the tile is in its stage ...
template <class T>
__device__ __forceinline__ int acquire_kv_stage(int tile) {
  const int stage = tile % T::KV_STAGES;
  named_barrier_sync(kBarrierFullBase + stage, T::THREADS);
  return stage;
}

// ... and hand the stage back once done, unless no later tile will refill it (a dangling
// arrival would leave the barrier half-counted at exit).
template <class T>
__device__ __forceinline__ void release_kv_stage(int tile, int n_tiles) {
  if (tile + T::KV_STAGES < n_tiles)
    named_barrier_arrive(kBarrierEmptyBase + tile % T::KV_STAGES, T::THREADS);
}

__device__ __forceinline__ void consumers_sync(int consumer_threads) {
  named_barrier_sync(kBarrierConsumers, consumer_threads);
}

}  // namespace fa
