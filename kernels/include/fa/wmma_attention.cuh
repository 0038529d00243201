// Tensor-core math through nvcuda::wmma (m16n16k16, fp16 in, fp32 accumulate), for step 6 on.
//
// Four consumer warps each own 16 query rows. Per K/V tile a warp computes S = Q K^T into
// fragments, passes it through shared memory for the online softmax (the fragment layout is
// unspecified, so rows cannot be reduced in registers portably), and accumulates O += P V in
// fragments that stay in registers for the whole kernel. Rescaling O by alpha needs each
// accumulator element's row: that is read off the hardware once per warp (accumulator_rows).
#pragma once

#include <mma.h>

#include "fa/common.cuh"
#include "fa/softmax.cuh"

namespace fa {

namespace wmma = nvcuda::wmma;
using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major>;
using FragKT = wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major>;  // K^T from row-major K
using FragV = wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major>;
using FragAcc = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

template <int D_, int KV_STAGES_ = 2, int PRODUCER_WARPS_ = 1>
struct WmmaTile {
  static constexpr int D = D_;
  static constexpr int BR = 64;
  static constexpr int BC = D == 64 ? 64 : 32;  // as ScalarTile: stays under 99 KB on sm_89
  static constexpr int CONSUMER_WARPS = BR / 16;
  static constexpr int CONSUMER_THREADS = 32 * CONSUMER_WARPS;
  static constexpr int PRODUCER_WARPS = PRODUCER_WARPS_;
  static constexpr int THREADS = CONSUMER_THREADS + 32 * PRODUCER_WARPS;
  static constexpr int KV_STAGES = KV_STAGES_;
  static constexpr int PAD = 8;
  static constexpr int LD = D + PAD;   // Q/K/V row stride (halves)
  static constexpr int LDS = BC + 4;   // S row stride (floats); wmma wants multiples of 16 bytes
  static constexpr int LDP = BC + 8;   // P row stride (halves)

  static constexpr size_t Q_HALVES = BR * LD;
  static constexpr size_t KV_HALVES = BC * LD;
  static constexpr size_t smem_bytes() {
    return (Q_HALVES + 2 * KV_STAGES * KV_HALVES + BR * LDP) * sizeof(half) +
           (BR * LDS + 2 * BR) * sizeof(float);
  }

  // Q | K[stages] | V[stages] | S (fp32) | alpha, 1/l (fp32, per row) | P (fp16). Every region
  // starts on a 32-byte boundary, as wmma loads and stores require.
  struct Smem : QkvCarving<half, Q_HALVES, KV_HALVES, KV_STAGES> {
    float* s;
    float* alpha;
    float* inv_l;
    half* p;
    __device__ explicit Smem(unsigned char* base)
        : QkvCarving<half, Q_HALVES, KV_HALVES, KV_STAGES>(base),
          s(static_cast<float*>(this->rest())),
          alpha(s + BR * LDS),
          inv_l(alpha + BR),
          p(reinterpret_cast<half*>(inv_l + BR)) {}
  };
};

// rows[e] = the row (0..15) of accumulator element e in this lane: load a 16x16 tile whose
// every element holds its own row index and read it back. `scratch` is 16 rows of stride ld.
__device__ __forceinline__ void accumulator_rows(int (&rows)[FragAcc::num_elements], float* scratch,
                                                 int ld, int lane) {
  for (int i = lane; i < 256; i += 32) scratch[(i / 16) * ld + i % 16] = static_cast<float>(i / 16);
  __syncwarp();
  FragAcc probe;
  wmma::load_matrix_sync(probe, scratch, ld, wmma::mem_row_major);
#pragma unroll
  for (int e = 0; e < FragAcc::num_elements; ++e) rows[e] = static_cast<int>(probe.x[e]);
  __syncwarp();
}

// acc[n] += A_w B_n for the warp's 16 rows over K_STEPS k-steps of 16: A_w's k-step kk at a_w + 16 kk (row
// stride lda), B_n's at b_at(n, kk) (FragB's layout, row stride ldb). The loop both GEMMs share.
template <int K_STEPS, class FragB, int N_FRAGS, class BlockAt>
__device__ __forceinline__ void wmma_gemm_rows(FragAcc (&acc)[N_FRAGS], const half* a_w, int lda, BlockAt b_at,
                                               int ldb) {
#pragma unroll
  for (int kk = 0; kk < K_STEPS; ++kk) {
    FragA a_frag;
    wmma::load_matrix_sync(a_frag, a_w + kk * 16, lda);
#pragma unroll
    for (int n = 0; n < N_FRAGS; ++n) {
      FragB b_frag;
      wmma::load_matrix_sync(b_frag, b_at(n, kk), ldb);
      wmma::mma_sync(acc[n], a_frag, b_frag, acc[n]);
    }
  }
}

// S (16 x BC, fp32, row stride LDS) = Q_w K^T for the warp's 16 query rows. Q fragments are
// re-read from shared memory each tile rather than held: at D = 128 holding them costs 64
// registers per thread and halves the resident blocks.
template <class T>
__device__ __forceinline__ void wmma_scores(float* s_w, const half* q_w, const half* sK) {
  FragAcc s_frag[T::BC / 16];
#pragma unroll
  for (int n = 0; n < T::BC / 16; ++n) wmma::fill_fragment(s_frag[n], 0.0f);
  wmma_gemm_rows<T::D / 16, FragKT>(s_frag, q_w, T::LD,
                                    [&](int n, int kk) { return sK + n * 16 * T::LD + kk * 16; }, T::LD);
#pragma unroll
  for (int n = 0; n < T::BC / 16; ++n)
    wmma::store_matrix_sync(s_w + n * 16, s_frag[n], T::LDS, wmma::mem_row_major);
}

// Online softmax of the warp's 16 rows. Lanes 2r and 2r+1 own row r; lane half h reads the
// float2 at columns 4i + 2h, which keeps each half-warp's 8-byte reads free of bank conflicts.
// Writes P (fp16) and each row's alpha.
template <class T>
__device__ __forceinline__ void wmma_softmax_rows(const float* s_w, half* p_w, float* alpha_w,
                                                  RowState& row_state, const AttnShape& shape,
                                                  int query0, int kv0, int lane) {
  const int r = lane / 2, h = lane % 2;
  float s[T::BC / 2];
#pragma unroll
  for (int i = 0; i < T::BC / 4; ++i) {
    const float2 x = *reinterpret_cast<const float2*>(s_w + r * T::LDS + 4 * i + 2 * h);
    s[2 * i] = x.x;
    s[2 * i + 1] = x.y;
  }
  scale_and_mask(s, shape, query0 + r, [&](int n) { return kv0 + 4 * (n / 2) + 2 * h + n % 2; });
  const float alpha = online_softmax_update<2>(s, row_state);
#pragma unroll
  for (int i = 0; i < T::BC / 4; ++i)
    *reinterpret_cast<half2*>(p_w + r * T::LDP + 4 * i + 2 * h) = __floats2half2_rn(s[2 * i], s[2 * i + 1]);
  if (h == 0) alpha_w[r] = alpha;
}

// O_w = alpha * O_w + P_w V, O_w in registers as D/16 accumulator fragments.
template <class T>
__device__ __forceinline__ void wmma_accumulate_pv(FragAcc (&o_frag)[T::D / 16],
                                                   const int (&rows)[FragAcc::num_elements],
                                                   const float* alpha_w, const half* p_w, const half* sV) {
#pragma unroll
  for (int f = 0; f < T::D / 16; ++f)
#pragma unroll
    for (int e = 0; e < FragAcc::num_elements; ++e) o_frag[f].x[e] *= alpha_w[rows[e]];
  wmma_gemm_rows<T::BC / 16, FragV>(o_frag, p_w, T::LDP,
                                    [&](int f, int kk) { return sV + kk * 16 * T::LD + f * 16; }, T::LD);
}

// Epilogue: O_w / l, one 16x16 block at a time through the warp's fp32 scratch, then 16-byte
// stores (lane -> row lane/2, 8 columns). Rows at or past rows_valid are not written.
template <class T>
__device__ __forceinline__ void wmma_store_output(half* out, FragAcc (&o_frag)[T::D / 16],
                                                  const int (&rows)[FragAcc::num_elements],
                                                  const float* inv_l_w, float* scratch, int rows_valid,
                                                  int lane) {
  const int r = lane / 2, c = (lane % 2) * 8;
#pragma unroll
  for (int f = 0; f < T::D / 16; ++f) {
#pragma unroll
    for (int e = 0; e < FragAcc::num_elements; ++e) o_frag[f].x[e] *= inv_l_w[rows[e]];
    wmma::store_matrix_sync(scratch, o_frag[f], T::LDS, wmma::mem_row_major);
    __syncwarp();
    if (r < rows_valid) {
      const float* src = scratch + r * T::LDS + c;
      half2 packed[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) packed[i] = __floats2half2_rn(src[2 * i], src[2 * i + 1]);
      *reinterpret_cast<uint4*>(out + r * T::D + f * 16 + c) = *reinterpret_cast<const uint4*>(packed);
    }
    __syncwarp();
  }
}

}  // namespace fa
