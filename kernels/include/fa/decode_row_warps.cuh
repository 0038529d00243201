// The decode branch's row-warp kernel, as steps 46, 47 and 54 on run it (step 46's; step 57 prefetches its maps):
// for calls of more than 32 packed query rows a K/V head (Falcon-7B's 71 heads on one), each consumer warp owns 16
// rows against every key of a tile, beside step 44's TMA tile kernel (fa/decode_tma_kernel.cuh). Included into the
// steps' anonymous namespace, as fa/decode_tma_kernel.cuh is.
#pragma once

#include "fa/decode_tma_kernel.cuh"

namespace {

// The row-warp tile: step 45's stages and producer, Q for up to MAX_WARPS consumer warps of 16 rows.
template <class Elem, int D>
struct RowWarpTile : TmaTile<Elem, D, 1> {
  using Base = TmaTile<Elem, D, 1>;
  static constexpr int MAX_WARPS = 6;
  static constexpr int MAX_ROWS = 16 * MAX_WARPS;
  static constexpr size_t smem_bytes() { return Base::STAGE_BYTES + MAX_ROWS * Base::LD * sizeof(Elem); }
};

// A CTA of blockDim.x / 32 - 1 consumer warps (16 packed rows each, the CTA's rows 16 x that) and one
// producer warp; the rows' results leave from registers (no merge of warps).
// PREFETCH_MAPS (step 57): the producer's first lane asks for both tensor maps first thing.
template <class Elem, int D, bool PREFETCH_MAPS = false>
__global__ void __launch_bounds__(32 * (RowWarpTile<Elem, D>::MAX_WARPS + 1), 1)
    decode_fwd_row_warps(const fa::DecodeArgs a, const fa::SplitPartials p, const __grid_constant__ CUtensorMap k_map,
                         const __grid_constant__ CUtensorMap v_map, const int box_rows) {
  using T = RowWarpTile<Elem, D>;
  using Layout = fa::Swizzled128<T>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ fa::KvRing<T::STAGES> ring;
  Elem* sk = reinterpret_cast<Elem*>(smem_raw);
  Elem* sv = sk + T::STAGES * T::KV_ELEMS;
  Elem* sq = sv + T::STAGES * T::KV_ELEMS;
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  const int consumers = blockDim.x / 32 - 1, consumer_threads = 32 * consumers;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  if constexpr (PREFETCH_MAPS)
    if (tid == consumer_threads) fa::tma::prefetch_map(&k_map), fa::tma::prefetch_map(&v_map);
  const int row_blocks = fa::ceil_div(a.rows, 16 * consumers);
  const int row0 = (blockIdx.x % row_blocks) * 16 * consumers, split = blockIdx.x / row_blocks;
  const int kv = blockIdx.y, b = blockIdx.z;
  const int n = a.cache_lens[b];
  const int key_begin = split * p.chunk;
  if (key_begin >= n) return;  // a chunk past a shorter sequence's end: the merge skips it
  const int key_end = min(key_begin + p.chunk, n);
  const int tiles = fa::ceil_div(key_end - key_begin, T::BC);
  ring.init(/*producer arrivals=*/1, /*consumer arrivals=*/consumer_threads);
  if (tid == 0) fa::tma::fence_barrier_init();
  __syncthreads();
  if (warp == consumers) {
    if (lane == 0) fa::produce_boxes<T>(ring, sk, sv, &k_map, &v_map, a, b, kv, key_begin, key_end, tiles, box_rows);
    return;
  }

  // The warp's 16 rows of Q into its own slice of shared memory.
  const int wrow0 = row0 + 16 * warp;
  Elem* sq_w = sq + warp * 16 * T::LD;
  fa::decode_load_q<T, /*ROWS=*/16, /*THREADS=*/32>(sq_w, a, b, kv, wrow0, lane);
  __syncwarp();
  int limit[1][2];
  fa::decode_row_limits<T>(limit, a, n, wrow0, key_end, lane);
  const float scale_log2 = a.scale * 1.4426950408889634f;
  float o[D / 8][4] = {};
  fa::RowState rows[2];
  for (int tile = 0; tile < tiles; ++tile) {
    const int st = ring.stage(tile);
    fa::mbarrier_wait(&ring.full[st], ring.parity(tile));
    const int key0 = key_begin + tile * T::BC;
    const bool past_end = key0 + T::BC > key_end;
    if (past_end) {  // every warp reads every row of V: its rows past the end zeroed once, by all consumers
      for (int c = tid; c < T::BC * (D / 8); c += consumer_threads) {
        const int r = c / (D / 8), col = (c % (D / 8)) * 8;
        if (key0 + r >= key_end)
          *reinterpret_cast<uint4*>(sv + st * T::KV_ELEMS + Layout::at(r, col)) = make_uint4(0, 0, 0, 0);
      }
      fa::named_barrier_sync(fa::kBarrierConsumers, consumer_threads);
    }
    fa::decode_row_warp_keys<T, Layout>(o, rows, sq_w, sk + st * T::KV_ELEMS, sv + st * T::KV_ELEMS, key0, limit[0],
                                        scale_log2, lane);
    if (past_end) fa::wgmma::fence_proxy_async();  // the zeros before the copy engine's next writes to the stage
    fa::mbarrier_arrive(&ring.empty[st]);
  }

  // Rows g and g + 8 of the warp: O over the sum into the output (one chunk), else the chunk's partial.
  const int g = lane / 4, tq = lane % 4;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = wrow0 + g + 8 * h;
    const float l = fa::group_sum<4>(rows[h].l);
    if (r >= a.rows) continue;
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;  // a row may see no key of a chunk (decode_write_rows)
    if (p.splits == 1) {
      Elem* dst = static_cast<Elem*>(a.o) + fa::query_offset<D>(a, b, kv, r) + 2 * tq;
#pragma unroll
      for (int c = 0; c < D / 8; ++c)
        *reinterpret_cast<unsigned*>(dst + 8 * c) = fa::pack2<Elem>(o[c][2 * h] * inv, o[c][2 * h + 1] * inv);
      continue;
    }
    const size_t at = fa::split_row(a, split, b, kv, r);
    float* dst = p.o + at * D + 2 * tq;
#pragma unroll
    for (int c = 0; c < D / 8; ++c)
      *reinterpret_cast<float2*>(dst + 8 * c) = make_float2(o[c][2 * h] * inv, o[c][2 * h + 1] * inv);
    if (tq == 0) p.lse[at] = rows[h].m + __log2f(l);
  }
}

}  // namespace
