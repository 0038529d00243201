// Warp specialization: producer warps stream K/V tiles into a ring of KV_STAGES shared-memory
// stages with cp.async while consumer warps compute on the stage before.
//
// Hand-off uses two mbarriers per stage (sm_80+), in shared memory:
//   full[s]:  every producer thread arrives once its copies into stage s have landed;
//             consumers wait on it before reading.
//   empty[s]: every consumer thread arrives once done reading stage s; producers wait on it
//             before refilling.
// An mbarrier arrive is a release of the arriving thread's own accesses and the wait an
// acquire, so every thread that wrote (or read) a stage arrives itself. Waiting threads spin
// only when the other side is really behind. (Named barriers with bar.arrive did the same job
// but compute-sanitizer racecheck does not model bar.arrive's ordering and reports hazards.)
#pragma once

#include <type_traits>

#include "fa/common.cuh"

namespace fa {

// Named barrier for the consumers alone (0 is __syncthreads).
constexpr int kBarrierConsumers = 1;

__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared.b64 state, [%0];\n}\n" ::"r"(smem_address(bar))
               : "memory");
}

// Wait until the phase with the given parity has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, int parity) {
  const unsigned addr = smem_address(bar);
  unsigned done = 0;
  while (!done) {
#if __CUDA_ARCH__ >= 900  // try_wait may suspend the thread in hardware instead of spinning
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(addr), "r"(parity) : "memory");
#else
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(addr), "r"(parity) : "memory");
#endif
  }
}

// The barriers of a KV_STAGES-deep ring; lives in static shared memory of the kernel.
template <int KV_STAGES>
struct KvRing {
  uint64_t full[KV_STAGES];
  uint64_t empty[KV_STAGES];

  // One thread initialises; the caller's __syncthreads publishes it to the block.
  __device__ void init(int producer_threads, int consumer_threads) {
    if (threadIdx.x == 0) {
      for (int s = 0; s < KV_STAGES; ++s) {
        mbarrier_init(&full[s], producer_threads);
        mbarrier_init(&empty[s], consumer_threads);
      }
    }
  }
  // Tile t uses stage t % KV_STAGES in round t / KV_STAGES; phases alternate parity per round.
  __device__ static int stage(int tile) { return tile % KV_STAGES; }
  __device__ static int parity(int tile) { return (tile / KV_STAGES) & 1; }
};

// 16-byte global -> shared copy that bypasses registers (and L1: .cg). src_bytes = 0 writes zeros.
__device__ __forceinline__ void cp_async_16(void* dst_smem, const void* src, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(dst_smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0)
               : "memory");
}

// Arrive on `bar` once every cp.async this thread has issued so far has landed, without waiting
// here (.noinc: the arrival is one of the barrier's expected arrivals).
__device__ __forceinline__ void cp_async_arrive_on(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(smem_address(bar)) : "memory");
}

__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

// Whether a tile description asks for the asynchronous hand-off (T::ASYNC_ARRIVE), default no.
template <class T, class = void>
struct AsyncArrive : std::false_type {};
template <class T>
struct AsyncArrive<T, std::void_t<decltype(T::ASYNC_ARRIVE)>> : std::bool_constant<T::ASYNC_ARRIVE> {};

__device__ __forceinline__ void cp_async_commit_and_wait_all() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_all;\n" ::: "memory");
}

// The cp.async twin of load_tile_vec16; zero-fills rows at or past rows_valid.
template <int ROWS, int D, int LD, int THREADS, class Elem>
__device__ __forceinline__ void cp_async_tile(Elem* dst, const Elem* src, int rows_valid, int tid) {
  constexpr int CHUNKS_PER_ROW = D / 8;
  for (int c = tid; c < ROWS * CHUNKS_PER_ROW; c += THREADS) {
    const int r = c / CHUNKS_PER_ROW, col = (c % CHUNKS_PER_ROW) * 8;
    const bool valid = r < rows_valid;
    cp_async_16(dst + r * LD + col, valid ? src + r * D + col : src, valid);
  }
}

// The same into the 128-byte-swizzled layout wgmma reads (see wgmma_attention.cuh): 64-column
// blocks, 16-byte chunk c of row r at chunk c ^ (r % 8); rows at or past
// rows_valid are zero-filled. Consecutive threads take consecutive 16-byte chunks of a row, so
// the global reads coalesce and each 8 threads fill one 128-byte shared row.
template <int ROWS, int D, int THREADS, class Elem>
__device__ __forceinline__ void cp_async_tile_sw128(Elem* dst, const Elem* src, int rows_valid, int tid) {
  constexpr int CHUNKS_PER_ROW = D / 8;
  for (int c = tid; c < ROWS * CHUNKS_PER_ROW; c += THREADS) {
    const int r = c / CHUNKS_PER_ROW, chunk = c % CHUNKS_PER_ROW;
    const int block = chunk / 8, in_block = chunk % 8;
    Elem* d = dst + block * (ROWS * 64) + r * 64 + ((in_block ^ (r % 8)) * 8);
    const bool valid = r < rows_valid;
    cp_async_16(d, valid ? src + r * D + chunk * 8 : src, valid);
  }
}

// Whether a tile description stores K/V 128-byte swizzled (T::SWIZZLE_128B), default no.
template <class T, class = void>
struct Swizzle128 : std::false_type {};
template <class T>
struct Swizzle128<T, std::void_t<decltype(T::SWIZZLE_128B)>> : std::bool_constant<T::SWIZZLE_128B> {};

template <class T, int THREADS, class Elem>
__device__ __forceinline__ void cp_async_kv_tile(Elem* dst, const Elem* src, int rows_valid, int tid) {
  if constexpr (Swizzle128<T>::value) cp_async_tile_sw128<T::BC, T::D, THREADS>(dst, src, rows_valid, tid);
  else cp_async_tile<T::BC, T::D, T::LD, THREADS>(dst, src, rows_valid, tid);
}

// The producer side: fill stage (tile % KV_STAGES) with K and V of every tile in turn.
// T provides BC, D, LD (unless SWIZZLE_128B), KV_STAGES, PRODUCER_WARPS and Smem::{k,v}_stage, and optionally
// ASYNC_ARRIVE: then completion of the copies arrives on "full" by itself and the producer
// moves on to the next stage at once, instead of waiting for each tile to land.
// ring_first is how many tiles went through the ring before these (a persistent CTA's earlier
// work tiles): tile t takes ring slot ring_first + t, as fa::tma::produce_kv_tiles does.
template <class T>
__device__ void produce_kv_tiles(KvRing<T::KV_STAGES>& ring, const typename T::Smem& sm, const ElemOf<T>* k_head,
                                 const ElemOf<T>* v_head, const AttnShape& shape, int n_tiles, int producer_tid,
                                 int ring_first = 0) {
  constexpr int PRODUCER_THREADS = 32 * T::PRODUCER_WARPS;
  for (int tile = 0; tile < n_tiles; ++tile) {
    const int slot = ring_first + tile;
    const int stage = ring.stage(slot);
    // Refilling a stage waits for the consumers' release of the tile it held last round.
    if (slot >= T::KV_STAGES) mbarrier_wait(&ring.empty[stage], ring.parity(slot - T::KV_STAGES));
    const int kv0 = tile * T::BC;
    const size_t offset = static_cast<size_t>(kv0) * T::D;
    cp_async_kv_tile<T, PRODUCER_THREADS>(sm.k_stage(stage), k_head + offset, shape.S - kv0, producer_tid);
    cp_async_kv_tile<T, PRODUCER_THREADS>(sm.v_stage(stage), v_head + offset, shape.S - kv0, producer_tid);
    if constexpr (AsyncArrive<T>::value) {
      cp_async_arrive_on(&ring.full[stage]);  // the copies signal "full" themselves; go on to the next tile
    } else {
      cp_async_commit_and_wait_all();
      mbarrier_arrive(&ring.full[stage]);
    }
  }
  if constexpr (AsyncArrive<T>::value) cp_async_wait_all();  // nothing in flight when the warp exits
}

// The consumer side: wait until the tile is in its stage ...
template <class T>
__device__ __forceinline__ int acquire_kv_stage(KvRing<T::KV_STAGES>& ring, int tile) {
  mbarrier_wait(&ring.full[ring.stage(tile)], ring.parity(tile));
  return ring.stage(tile);
}

// ... and hand the stage back once done with it.
template <class T>
__device__ __forceinline__ void release_kv_stage(KvRing<T::KV_STAGES>& ring, int tile) {
  mbarrier_arrive(&ring.empty[ring.stage(tile)]);
}

__device__ __forceinline__ void consumers_sync(int consumer_threads) {
  named_barrier_sync(kBarrierConsumers, consumer_threads);
}

// --- No producer warp: the consumers copy K/V themselves ----------------------------------------
// The FlashAttention-2 arrangement. Every thread issues its share of a tile's copies and commits
// them as one cp.async group; KV_STAGES - 1 tiles are in flight ahead of the one computed on. A
// tile is ready once this thread's group has landed (wait_kv_tile: cp.async.wait_group) and every
// other thread's has too (the __syncthreads after it), and that barrier also says that every warp
// is done with the stage the next copy refills.

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int PENDING>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// Copies tile `tile` (if it exists) into stage tile % KV_STAGES and commits a group either way:
// an empty group past the last tile keeps "groups still pending" counting tiles.
template <class T>
__device__ __forceinline__ void issue_kv_tile(const typename T::Smem& sm, const ElemOf<T>* k_head, const ElemOf<T>* v_head,
                                              const AttnShape& shape, int tile, int n_tiles, int tid) {
  if (tile < n_tiles) {
    const int stage = tile % T::KV_STAGES, kv0 = tile * T::BC;
    const size_t offset = static_cast<size_t>(kv0) * T::D;
    cp_async_kv_tile<T, T::THREADS>(sm.k_stage(stage), k_head + offset, shape.S - kv0, tid);
    cp_async_kv_tile<T, T::THREADS>(sm.v_stage(stage), v_head + offset, shape.S - kv0, tid);
  }
  cp_async_commit();
}

// Waits until the oldest tile in flight has landed for the whole block.
template <class T>
__device__ __forceinline__ void wait_kv_tile() {
  cp_async_wait_group<T::KV_STAGES - 2>();
  __syncthreads();
}

}  // namespace fa
