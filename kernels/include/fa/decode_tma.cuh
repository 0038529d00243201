// The copy engine for decode caches (the decode branch's sm_90a steps): a bulk copy of bytes without a
// tensor map (step 40: one a token row), and a decode cache as a tensor map (step 41: boxes of rows).
// Kept apart from fa/tma.cuh so that the prefill steps' sources are not touched by the decode steps.
#pragma once

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

namespace {  // internal linkage, like fa::launch: nothing shared between variant libraries

// A decode cache (tokens, H_kv, D) of Elem as a 3-D map (D fastest, then the K/V head, then the
// token) read in boxes of 64 columns x one head x box_rows tokens, 128-byte swizzled; tokens past
// `tokens` read as zeros. `promotion`: how much a box's request brings into L2 (256 bytes: a whole
// row of D = 128 for its first 64-column box). Returns a cudaError_t value (0 = success).
template <class Elem>
int make_cache_map(CUtensorMap* map, const Elem* base, long long tokens, int H_kv, int D, int box_rows,
                   CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  if (!encode) {
    cudaDriverEntryPointQueryResult found;
    void* fn = nullptr;
    const cudaError_t err =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
    if (err != cudaSuccess) return static_cast<int>(err);
    if (found != cudaDriverEntryPointSuccess || !fn) return static_cast<int>(cudaErrorNotSupported);
    encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(D), static_cast<cuuint64_t>(H_kv),
                              static_cast<cuuint64_t>(tokens)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(D) * sizeof(Elem),
                                 static_cast<cuuint64_t>(H_kv) * D * sizeof(Elem)};  // bytes, dims 1..2
  const cuuint32_t box[3] = {64, 1, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult r = encode(map, is_bf16<Elem> ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3,
                            const_cast<Elem*>(base), dims, strides, box, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, promotion,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : static_cast<int>(cudaErrorInvalidValue);
}

}  // namespace
}  // namespace tma
}  // namespace fa
