// The decode branch's TMA tile kernel, as steps 44-47 and 54 on run it (step 44's; step 57 prefetches its maps):
// one CTA a (row block, chunk, K/V head, sequence), a producer warp asking the copy engine for boxes of the cache
// (fa/decode_tma.cuh), consumer warps each taking 16 keys of a tile with their own online softmax, merged at the
// end through the stages. Included by the steps' translation units into their anonymous namespace, where each step
// carried it before: one copy of the code, the same kernels (and names) in every step's library.
#pragma once

#include "fa/decode.cuh"
#include "fa/decode_tma.cuh"
#include "fa/wgmma_attention.cuh"  // fa::wgmma::fence_proxy_async

namespace {

template <class Elem, int D, int RT>
using TmaTile = fa::DecodeTmaTile<Elem, D, RT>;  // fa/decode_tma.cuh, with produce_boxes and zero_rows_past

// A consumer warp's share of the tile in the ring's slot `slot` (keys from tile_key0): its 16 keys into the warp's
// running softmax once the copy engine has filled the stage, then the stage released.
template <class T, class Layout>
__device__ __forceinline__ void decode_consume_tile(fa::KvRing<T::STAGES>& ring, unsigned slot,
                                                    float (&o)[T::RT][T::D / 8][4], fa::RowState (&rows)[T::RT][2],
                                                    const typename T::Elem* sq, typename T::Elem* sk,
                                                    typename T::Elem* sv, int tile_key0, int key_end,
                                                    const int (&limit)[T::RT][2], float scale_log2, int warp,
                                                    int lane) {
  const int st = fa::ring_stage<T::STAGES>(slot);
  fa::mbarrier_wait(&ring.full[st], fa::ring_parity<T::STAGES>(slot));
  const int off = st * T::KV_ELEMS + Layout::warp_rows(warp * T::WARP_KEYS);
  const int key0 = tile_key0 + warp * T::WARP_KEYS;
  const bool past_end = key0 + T::WARP_KEYS > key_end;
  if (past_end) fa::zero_rows_past<T, Layout>(sv + off, key0, key_end, lane);
  fa::decode_warp_keys<T, Layout>(o, rows, sq, sk + off, sv + off, key0, limit, scale_log2, lane);
  if (past_end) fa::wgmma::fence_proxy_async();  // the zeros before the copy engine's next writes to the stage
  fa::mbarrier_arrive(&ring.empty[st]);  // each thread releases its own reads of the stage
}

// PREFETCH_MAPS (step 57): the producer's first lane asks for both tensor maps first thing.
template <class Elem, int D, int RT, bool PREFETCH_MAPS = false>
__global__ void __launch_bounds__(fa::DecodeTile<Elem, D, RT>::THREADS + 32, 1)
    decode_fwd(const fa::DecodeArgs a, const fa::SplitPartials p, const __grid_constant__ CUtensorMap k_map,
               const __grid_constant__ CUtensorMap v_map, const int box_rows) {
  using T = TmaTile<Elem, D, RT>;
  using Layout = fa::Swizzled128<T>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];  // the swizzle repeats every 1024 bytes
  __shared__ fa::KvRing<T::STAGES> ring;
  Elem* sk = reinterpret_cast<Elem*>(smem_raw);  // the stages first: each 1024-byte aligned
  Elem* sv = sk + T::STAGES * T::KV_ELEMS;
  Elem* sq = sv + T::STAGES * T::KV_ELEMS;
  // The merge kernel may be scheduled once every CTA has started (it waits for this grid's end itself).
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  if constexpr (PREFETCH_MAPS)
    if (tid == T::THREADS) fa::tma::prefetch_map(&k_map), fa::tma::prefetch_map(&v_map);
  const int row_blocks = fa::ceil_div(a.rows, T::BR);
  const int row0 = (blockIdx.x % row_blocks) * T::BR, split = blockIdx.x / row_blocks;
  const int kv = blockIdx.y, b = blockIdx.z;
  const int n = a.cache_lens[b];
  const int key_begin = split * p.chunk;
  if (key_begin >= n) return;  // a chunk past a shorter sequence's end: the merge skips it
  const int key_end = min(key_begin + p.chunk, n);
  const int tiles = fa::ceil_div(key_end - key_begin, T::BC);
  ring.init(/*producer arrivals=*/1, /*consumer arrivals=*/T::THREADS);
  if (tid == 0) fa::tma::fence_barrier_init();
  __syncthreads();
  if (warp == T::WARPS) {  // the producer leaves once its copies are issued; they complete without it
    if (lane == 0) fa::produce_boxes<T>(ring, sk, sv, &k_map, &v_map, a, b, kv, key_begin, key_end, tiles, box_rows);
    return;
  }

  fa::decode_load_q<T>(sq, a, b, kv, row0, tid);
  int limit[RT][2];
  fa::decode_row_limits<T>(limit, a, n, row0, key_end, lane);
  const float scale_log2 = a.scale * 1.4426950408889634f;
  float o[RT][D / 8][4] = {};
  fa::RowState rows[RT][2];
  fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);  // Q is in shared memory
  for (int tile = 0; tile < tiles; ++tile)
    decode_consume_tile<T, Layout>(ring, tile, o, rows, sq, sk, sv, key_begin + tile * T::BC, key_end, limit,
                                   scale_log2, warp, lane);
  fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);  // every consumer is past its last tile

  // The stages become the merge buffer (every copy landed: each full barrier was waited on).
  static_assert(T::MERGE_BYTES <= T::STAGE_BYTES, "the merge buffer must fit in the stages");
  auto* red = reinterpret_cast<float*>(sk);
  fa::decode_merge_warps<T, /*CONSUMERS_ONLY=*/true>(red, o, rows, warp, lane);
  fa::decode_write_rows<T>(red, a, p, b, kv, row0, split, tid);
}

}  // namespace
