// The copy engine for decode caches (the decode branch's sm_90a steps): a bulk copy of bytes without a
// tensor map (step 40: one a token row), and a decode cache as a tensor map (step 41: boxes of rows).
// Kept apart from fa/tma.cuh so that the prefill steps' sources are not touched by the decode steps.
#pragma once

#include "fa/decode.cuh"
#include "fa/tma.cuh"

namespace fa {
namespace tma {

// `bytes` (a multiple of 16, both addresses 16-byte aligned) from global to shared memory by the copy
// engine, without a tensor map; completion counts on `bar` (which expects the bytes: arrive_expect_bytes).
__device__ __forceinline__ void load_bytes(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   smem_address(dst)),
               "l"(src), "r"(bytes), "r"(smem_address(bar))
               : "memory");
}

// Asks for a tensor map's 128 bytes ahead of the first copy that reads it (prefetch.tensormap), so that the copy
// engine does not fetch them when the first box is asked for (FlashAttention-3's producers begin so). `map`: a
// __grid_constant__ kernel parameter's address.
__device__ __forceinline__ void prefetch_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

namespace {  // internal linkage, like fa::launch: nothing shared between variant libraries

// A decode cache (tokens, H_kv, D) of Elem as a 3-D map (D fastest, then the K/V head, then the
// token) read in boxes of 64 columns x one head x box_rows tokens, 128-byte swizzled; tokens past
// `tokens` read as zeros. `promotion`: how much a box's request brings into L2 (256 bytes: a whole
// row of D = 128 for its first 64-column box). Returns a cudaError_t value (0 = success).
template <class Elem>
int make_cache_map(CUtensorMap* map, const Elem* base, long long tokens, int H_kv, int D, int box_rows,
                   CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(D), static_cast<cuuint64_t>(H_kv),
                              static_cast<cuuint64_t>(tokens)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(D) * sizeof(Elem),
                                 static_cast<cuuint64_t>(H_kv) * D * sizeof(Elem)};  // bytes, dims 1..2
  const cuuint32_t box[3] = {64, 1, static_cast<cuuint32_t>(box_rows)};
  return encode_3d_map(map, base, dims, strides, box, promotion);
}

}  // namespace
}  // namespace tma

namespace {  // the tile and the producer of the decode steps that read the cache through tensor maps

// The decode tile with unpadded K/V stages in the copy engine's 128-byte swizzle (Q keeps its padded
// rows): the tile of the sm_90a decode steps from 41 on.
template <class Elem, int D, int RT, int STAGES = 3>
struct DecodeTmaTile : DecodeTile<Elem, D, RT, STAGES> {
  using Base = DecodeTile<Elem, D, RT, STAGES>;
  static constexpr int KV_ELEMS = Base::BC * D;
  static constexpr size_t STAGE_BYTES = 2 * Base::STAGES * KV_ELEMS * sizeof(Elem);
  static constexpr size_t smem_bytes() { return STAGE_BYTES + Base::Q_ELEMS * sizeof(Elem); }
};

// The ring's stage and phase parity of slot s (KvRing::stage and parity) for a count kept unsigned: a persistent CTA's
// runs on over its works, and the compiler cannot prove a signed one non-negative, so its division pays for the sign.
template <int STAGES>
__device__ __forceinline__ int ring_stage(unsigned s) { return static_cast<int>(s % STAGES); }
template <int STAGES>
__device__ __forceinline__ int ring_parity(unsigned s) { return static_cast<int>(s / STAGES) & 1; }

// The producer warp: every box of every tile of the chunk, into the stage the ring gives it (lane 0
// alone: a box is one instruction). Boxes starting at or past the chunk's end are not asked for. Tile t takes
// the ring's slot slot0 + t (a persistent CTA's ring runs on across its works: fa/decode_persistent.cuh).
template <class T>
__device__ __forceinline__ void produce_boxes(KvRing<T::STAGES>& ring, typename T::Elem* sk,
                                              typename T::Elem* sv, const CUtensorMap* k_map,
                                              const CUtensorMap* v_map, const DecodeArgs& a, int b, int kv,
                                              int key_begin, int key_end, int tiles, int box_rows, int slot0 = 0) {
  constexpr unsigned BLOCK_ELEMS = 64;  // a box's columns: 128 bytes, one swizzle row
  for (int tile = 0; tile < tiles; ++tile) {
    const int slot = slot0 + tile, st = ring.stage(slot);
    if (slot >= T::STAGES) mbarrier_wait(&ring.empty[st], ring.parity(slot - T::STAGES));
    const int key0 = key_begin + tile * T::BC;
    const int boxes = min(T::BC, key_end - key0 + box_rows - 1) / box_rows;  // those that start before the end
    tma::arrive_expect_bytes(&ring.full[st],
                                 2u * (T::D / BLOCK_ELEMS) * boxes * box_rows * BLOCK_ELEMS * sizeof(typename T::Elem));
    for (int j = 0; j < boxes; ++j) {
      const int t0 = key0 + j * box_rows;
      const int row = static_cast<int>(cache_slot(a, b, t0));
#pragma unroll
      for (int block = 0; block < T::D / 64; ++block) {
        const int dst = block * (T::BC * 64) + j * box_rows * 64;
        tma::load_box(sk + st * T::KV_ELEMS + dst, k_map, block * 64, kv, row, &ring.full[st]);
        tma::load_box(sv + st * T::KV_ELEMS + dst, v_map, block * 64, kv, row, &ring.full[st]);
      }
    }
  }
}

// Rows of the warp's 16 keys at or past key_end set to zero in V (a box may have brought the next
// page's rows, or left an earlier tile's): P is 0 there, and 0 times a stale NaN would not be.
template <class T, class Layout>
__device__ __forceinline__ void zero_rows_past(typename T::Elem* sv_w, int key0, int key_end, int lane) {
  for (int c = lane; c < T::WARP_KEYS * (T::D / 8); c += 32) {
    const int r = c / (T::D / 8), col = (c % (T::D / 8)) * 8;
    if (key0 + r >= key_end) *reinterpret_cast<uint4*>(sv_w + Layout::at(r, col)) = make_uint4(0, 0, 0, 0);
  }
  __syncwarp();
}

}  // namespace
}  // namespace fa
