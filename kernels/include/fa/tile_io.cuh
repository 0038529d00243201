// Moving tiles between global and shared memory. Tiles are ROWS x D 16-bit elements (fp16, or bf16
// in the steps that take it), stored in shared memory with a row stride of LD elements (LD > D when
// a step pads rows). Rows at or past
// `rows_valid` (the ragged end of the sequence) are zero-filled: a masked score gives p = 0,
// and 0 * garbage could still be NaN.
#pragma once

#include "fa/common.cuh"

namespace fa {

// The simple way: each of the first ROWS threads copies the row it will work on, one half at a
// time. Neighbouring lanes touch addresses D halves apart, so a warp's loads do not coalesce.
template <int ROWS, int D, int LD>
__device__ __forceinline__ void load_rows_naive(half* dst, const half* src, int rows_valid, int tid) {
  if (tid >= ROWS) return;
  for (int d = 0; d < D; ++d)
    dst[tid * LD + d] = tid < rows_valid ? src[tid * D + d] : __float2half(0.0f);
}

// The simple way out: each thread writes its own slice of an output row, one half at a time.
template <int N>
__device__ __forceinline__ void store_slice_naive(half* dst, const float (&acc)[N], float inv_l) {
  for (int c = 0; c < N; ++c) dst[c] = __float2half(acc[c] * inv_l);
}

// Coalesced: consecutive threads move consecutive 16-byte chunks, so a warp reads 512
// contiguous bytes per instruction.
template <int ROWS, int D, int LD, int THREADS, class Elem>
__device__ __forceinline__ void load_tile_vec16(Elem* dst, const Elem* src, int rows_valid, int tid) {
  constexpr int CHUNKS_PER_ROW = D / 8;
  for (int c = tid; c < ROWS * CHUNKS_PER_ROW; c += THREADS) {
    const int r = c / CHUNKS_PER_ROW, col = (c % CHUNKS_PER_ROW) * 8;
    uint4 chunk = make_uint4(0, 0, 0, 0);
    if (r < rows_valid) chunk = *reinterpret_cast<const uint4*>(src + r * D + col);
    *reinterpret_cast<uint4*>(dst + r * LD + col) = chunk;
  }
}

template <int ROWS, int D, int LD, int THREADS, class Elem>
__device__ __forceinline__ void store_tile_vec16(Elem* dst, const Elem* src, int rows_valid, int tid) {
  constexpr int CHUNKS_PER_ROW = D / 8;
  for (int c = tid; c < ROWS * CHUNKS_PER_ROW; c += THREADS) {
    const int r = c / CHUNKS_PER_ROW, col = (c % CHUNKS_PER_ROW) * 8;
    if (r < rows_valid)
      *reinterpret_cast<uint4*>(dst + r * D + col) = *reinterpret_cast<const uint4*>(src + r * LD + col);
  }
}

// Normalises a thread's accumulator slice and writes it into a shared-memory row (fp16).
template <int N>
__device__ __forceinline__ void stage_slice(half* dst, const float (&acc)[N], float inv_l) {
#pragma unroll
  for (int c = 0; c < N; c += 2)
    *reinterpret_cast<half2*>(dst + c) = __floats2half2_rn(acc[c] * inv_l, acc[c + 1] * inv_l);
}

}  // namespace fa
