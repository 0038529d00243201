// Online softmax (Milakov & Gimelshein; FlashAttention): each query row keeps a running max m
// and a running sum l of exp(score - m). When a new tile raises the max, everything
// accumulated so far is rescaled by alpha = exp(m_old - m_new).
//
// A row's scores are spread over GROUP consecutive lanes of a warp; reductions use shuffles.
#pragma once

#include "fa/common.cuh"

namespace fa {

// -inf that host and device compilation passes both accept (CUDART_INF_F is device-only).
constexpr float kNegInf = -__builtin_huge_valf();

struct RowState {
  float m = kNegInf;  // running max of scaled scores seen so far
  float l = 0.0f;           // running sum of exp(score - m)
};

template <int GROUP>
__device__ __forceinline__ float group_max(float x) {
#pragma unroll
  for (int off = 1; off < GROUP; off <<= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
  return x;
}

template <int GROUP>
__device__ __forceinline__ float group_sum(float x) {
#pragma unroll
  for (int off = 1; off < GROUP; off <<= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

// Scales raw scores and sets invisible ones (past the end of the sequence, or above the
// diagonal when causal) to -inf. key_of(n) gives the key index of s[n].
template <int N, class KeyOf>
__device__ __forceinline__ void scale_and_mask(float (&s)[N], const AttnShape& shape, int query,
                                               KeyOf key_of) {
#pragma unroll
  for (int n = 0; n < N; ++n) {
    const int key = key_of(n);
    const bool visible = key < shape.S && !(shape.causal && key > query);
    s[n] = visible ? s[n] * shape.scale : kNegInf;
  }
}

// Turns scaled scores into unnormalised probabilities in place, updates the row state and
// returns alpha, the factor the row's accumulator must be multiplied by.
template <int GROUP, int N>
__device__ __forceinline__ float online_softmax_update(float (&s)[N], RowState& row) {
  float tile_max = kNegInf;
#pragma unroll
  for (int n = 0; n < N; ++n) tile_max = fmaxf(tile_max, s[n]);
  const float m_new = fmaxf(row.m, group_max<GROUP>(tile_max));
  // A row that has seen no visible key yet (only padding rows past S) stays at p = 0, not NaN.
  const float base = m_new == kNegInf ? 0.0f : m_new;
  const float alpha = __expf(row.m - base);
  float tile_sum = 0.0f;
#pragma unroll
  for (int n = 0; n < N; ++n) {
    s[n] = __expf(s[n] - base);
    tile_sum += s[n];
  }
  row.l = row.l * alpha + group_sum<GROUP>(tile_sum);
  row.m = m_new;
  return alpha;
}

// 1/l for the epilogue; rows with l == 0 (padding rows, never stored) give 0 rather than inf.
__device__ __forceinline__ float inverse_sum(const RowState& row) {
  return row.l > 0.0f ? 1.0f / row.l : 0.0f;
}

// The epilogue's 1/l where the four lanes of a quad each kept a part of the row's l (the mma.sync and wgmma
// fragments' rows; summed once here rather than every tile): the parts summed and stored back, then inverted.
__device__ __forceinline__ float quad_inverse_sum(RowState& row) {
  row.l = group_sum<4>(row.l);
  return inverse_sum(row);
}

// A warp's O / l as Elem pairs, the thread's share of the accumulator layout: write(r, n, pair) stores the
// pair of row r (g or g + 8 of the warp's 16) at columns n * 8 + 2t and + 1, for the rows below rows_valid.
template <class T, class Write>
__device__ __forceinline__ void for_each_output_pair(const float (&o)[T::D / 8][4], RowState (&rows)[2], int rows_valid,
                                                     int lane, Write&& write) {
  const int g = lane / 4;
#pragma unroll
  for (int half_row = 0; half_row < 2; ++half_row) {
    const float inv = quad_inverse_sum(rows[half_row]);
    const int r = g + 8 * half_row;
    if (r >= rows_valid) continue;
#pragma unroll
    for (int n = 0; n < T::D / 8; ++n)
      write(r, n, pack2<ElemOf<T>>(o[n][2 * half_row] * inv, o[n][2 * half_row + 1] * inv));
  }
}

}  // namespace fa
