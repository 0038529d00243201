// Tensor Memory Accelerator (sm_90): one thread asks the copy engine for a whole tile; the
// hardware writes it into shared memory already in wgmma's 128-byte swizzle, zero-fills rows
// past the end of the sequence, and counts the bytes on an mbarrier (complete_tx), so the
// consumers' full barrier flips when the data has landed. No producer registers, no address
// arithmetic, no cp.async in flight per thread.
//
// Host side: a tensor map per tensor, made for each call (cheap, and it is a kernel argument,
// so a CUDA graph captures it). The driver entry point is looked up through the runtime, so
// nothing links against libcuda directly.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include "fa/common.cuh"
#include "fa/pipeline.cuh"

namespace fa {
namespace tma {

namespace {  // internal linkage, like fa::launch: nothing shared between variant libraries

// cuTensorMapEncodeTiled, looked up in the driver once per process; nullptr with *err set where it cannot be.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder(int* err) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  if (!encode) {
    cudaDriverEntryPointQueryResult found;
    void* fn = nullptr;
    const cudaError_t e =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
    if (e != cudaSuccess) {
      *err = static_cast<int>(e);
      return nullptr;
    }
    if (found != cudaDriverEntryPointSuccess || !fn) {
      *err = static_cast<int>(cudaErrorNotSupported);
      return nullptr;
    }
    encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }
  return encode;
}

// A 3-D tensor of Elem (half or __nv_bfloat16; dims[0] fastest, strides of dims 1..2 in bytes) as a map read
// in boxes of `box` elements, 128-byte swizzled; elements past the dims read as zeros. `promotion`: how much
// a box's request brings into L2. Returns a cudaError_t value (0 = success).
template <class Elem>
int encode_3d_map(CUtensorMap* map, const Elem* base, const cuuint64_t (&dims)[3], const cuuint64_t (&strides)[2],
                  const cuuint32_t (&box)[3], CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  int err = 0;
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder(&err);
  if (!encode) return err;
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult r = encode(map, is_bf16<Elem> ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3,
                            const_cast<Elem*>(base), dims, strides, box, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, promotion,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : static_cast<int>(cudaErrorInvalidValue);
}

// A (heads, S, D) tensor of Elem (half or __nv_bfloat16) as a 3-D map (D fastest) read in boxes
// of 64 columns (128 bytes, one swizzle row) x box_rows rows of one head; rows past S read as
// zeros. Returns a cudaError_t value (0 = success).
template <class Elem>
int make_head_map(CUtensorMap* map, const Elem* base, int heads, int S, int D, int box_rows) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(D), static_cast<cuuint64_t>(S), static_cast<cuuint64_t>(heads)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(D) * sizeof(Elem),
                                 static_cast<cuuint64_t>(S) * D * sizeof(Elem)};  // bytes, dims 1..2
  const cuuint32_t box[3] = {64, static_cast<cuuint32_t>(box_rows), 1};
  return encode_3d_map(map, base, dims, strides, box);
}

// Q, K, V or O of a multi-head shape: B * H heads.
int make_head_map(CUtensorMap* map, const half* base, const AttnShape& shape, int D, int box_rows) {
  return make_head_map(map, base, shape.B * shape.H, shape.S, D, box_rows);
}

}  // namespace

// The producer's arrival on a full barrier, announcing how many bytes the copies will deliver.
__device__ __forceinline__ void arrive_expect_bytes(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
}

// One box at (column c0, row c1, head c2) into shared memory; completion counts on `bar`.
template <class Elem>
__device__ __forceinline__ void load_box(Elem* dst, const CUtensorMap* map, int c0, int c1, int c2, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_address(bar))
      : "memory");
}

// A ROWS x D tile (rows row0.. of one head) as D/64 boxes, into the swizzled layout's column
// blocks; completion counts on `bar`.
template <int ROWS, int D, class Elem>
__device__ __forceinline__ void load_tile(Elem* dst, const CUtensorMap* map, int row0, int head, uint64_t* bar) {
#pragma unroll
  for (int block = 0; block < D / 64; ++block) load_box(dst + block * ROWS * 64, map, block * 64, row0, head, bar);
}

// The store direction: a ROWS x D tile from shared memory (the swizzled layout load_tile writes)
// to rows row0.. of one head, as D/64 boxes of one bulk group; rows past the end of the head are
// not written. The writers of the tile must have made their st.shared visible to the async proxy
// (fence.proxy.async) and synchronised with the issuing thread first.
template <int ROWS, int D, class Elem>
__device__ __forceinline__ void store_tile(const CUtensorMap* map, const Elem* src, int row0, int head) {
#pragma unroll
  for (int block = 0; block < D / 64; ++block)
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(smem_address(src + block * ROWS * 64)), "r"(block * 64), "r"(row0), "r"(head)
                 : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Waits until the copy engine has read the shared memory of all but the newest PENDING stores
// (the tile's buffer may then be reused), or, with READ_ONLY = false, until they are complete.
template <int PENDING, bool READ_ONLY = true>
__device__ __forceinline__ void wait_stores() {
  if constexpr (READ_ONLY) asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(PENDING) : "memory");
  else asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// Makes mbarrier.init visible to the async proxy (the copy engine arrives on these barriers).
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// The producer side with TMA: one thread fills the ring with K and V of every tile in turn.
// ring_first is how many tiles went through the ring before these (a persistent CTA's earlier
// work tiles): tile t takes ring slot ring_first + t, stage (slot % KV_STAGES).
template <class T>
__device__ void produce_kv_tiles(KvRing<T::KV_STAGES>& ring, const typename T::Smem& sm, const CUtensorMap* k_map,
                                 const CUtensorMap* v_map, int head, int n_tiles, int ring_first = 0) {
  constexpr unsigned kTileBytes = 2u * T::BC * T::D * sizeof(ElemOf<T>);  // K and V, zero-filled rows included
  for (int tile = 0; tile < n_tiles; ++tile) {
    const int slot = ring_first + tile;
    const int stage = ring.stage(slot);
    if (slot >= T::KV_STAGES) mbarrier_wait(&ring.empty[stage], ring.parity(slot - T::KV_STAGES));
    arrive_expect_bytes(&ring.full[stage], kTileBytes);
    load_tile<T::BC, T::D>(sm.k_stage(stage), k_map, tile * T::BC, head, &ring.full[stage]);
    load_tile<T::BC, T::D>(sm.v_stage(stage), v_map, tile * T::BC, head, &ring.full[stage]);
  }
}

}  // namespace tma
}  // namespace fa
