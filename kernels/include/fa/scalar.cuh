// The CUDA-core (scalar fp32) math of steps 1-5.
//
// A block owns BR = 64 query rows. Each row is worked on by TPR = 4 consecutive lanes ("part"
// 0..3): for S = Q K^T a part takes the keys part, part+4, part+8, ...; for O += P V it takes a
// contiguous quarter of the head dimension. P goes through shared memory between the two, but
// only within the 4 lanes of a row, so a __syncwarp is enough there.
#pragma once

#include "fa/common.cuh"

namespace fa {

// PAD: halves of padding at the end of every Q/K/V row in shared memory (0 or 8). The P tile
// (fp32) is padded by PAD/2 floats, the same 16 bytes.
template <int D_, int PAD_, int KV_STAGES_ = 1, int PRODUCER_WARPS_ = 0>
struct ScalarTile {
  static constexpr int D = D_;
  static constexpr int BR = 64;
  // D = 128 takes 32 keys per tile so that the double-buffered steps stay under the 99 KB of
  // shared memory a block may have on sm_89.
  static constexpr int BC = D == 64 ? 64 : 32;
  static constexpr int TPR = 4;
  static constexpr int CONSUMER_THREADS = BR * TPR;
  static constexpr int PRODUCER_WARPS = PRODUCER_WARPS_;
  static constexpr int THREADS = CONSUMER_THREADS + 32 * PRODUCER_WARPS;
  static constexpr int KV_STAGES = KV_STAGES_;
  static constexpr int PAD = PAD_;
  static constexpr int LD = D + PAD;       // Q/K/V row stride in halves
  static constexpr int LDP = BC + PAD / 2;  // P row stride in floats
  static constexpr int KEYS_PER_THREAD = BC / TPR;
  static constexpr int COLS_PER_THREAD = D / TPR;

  static constexpr size_t Q_HALVES = BR * LD;
  static constexpr size_t KV_HALVES = BC * LD;  // one K or one V tile
  static constexpr size_t smem_bytes() {
    return (Q_HALVES + 2 * KV_STAGES * KV_HALVES) * sizeof(half) + BR * LDP * sizeof(float);
  }

  // Carving of the dynamic shared memory: Q | K[stages] | V[stages] | P.
  struct Smem : QkvCarving<half, Q_HALVES, KV_HALVES, KV_STAGES> {
    float* p;
    __device__ explicit Smem(unsigned char* base)
        : QkvCarving<half, Q_HALVES, KV_HALVES, KV_STAGES>(base), p(static_cast<float*>(this->rest())) {}
  };
};

// s[n] = Q[row] . K[part + TPR*n] over the head dimension, fp32 accumulation. The Q value is
// read once per column pair and reused for all of this thread's keys.
template <class T>
__device__ __forceinline__ void scalar_scores(float (&s)[T::KEYS_PER_THREAD], const half* sQ,
                                              const half* sK, int row, int part) {
#pragma unroll
  for (int n = 0; n < T::KEYS_PER_THREAD; ++n) s[n] = 0.0f;
  const half2* q_row = reinterpret_cast<const half2*>(sQ + row * T::LD);
#pragma unroll 4
  for (int d2 = 0; d2 < T::D / 2; ++d2) {
    const float2 qf = __half22float2(q_row[d2]);
#pragma unroll
    for (int n = 0; n < T::KEYS_PER_THREAD; ++n) {
      const half2* k_row = reinterpret_cast<const half2*>(sK + (part + T::TPR * n) * T::LD);
      const float2 kf = __half22float2(k_row[d2]);
      s[n] = fmaf(qf.x, kf.x, fmaf(qf.y, kf.y, s[n]));
    }
  }
}

// Key index (within the whole sequence) of s[n] for a thread of the given part.
template <class T>
__device__ __forceinline__ int scalar_key(int kv0, int part, int n) {
  return kv0 + part + T::TPR * n;
}

template <class T>
__device__ __forceinline__ void write_probabilities(float* sP, const float (&p)[T::KEYS_PER_THREAD],
                                                    int row, int part) {
#pragma unroll
  for (int n = 0; n < T::KEYS_PER_THREAD; ++n) sP[row * T::LDP + part + T::TPR * n] = p[n];
}

// acc = alpha * acc + P[row] V[:, this thread's quarter of D].
template <class T>
__device__ __forceinline__ void scalar_accumulate_pv(float (&acc)[T::COLS_PER_THREAD], float alpha,
                                                     const float* sP, const half* sV, int row,
                                                     int part) {
#pragma unroll
  for (int c = 0; c < T::COLS_PER_THREAD; ++c) acc[c] *= alpha;
  const float* p_row = sP + row * T::LDP;
  const int col0 = part * T::COLS_PER_THREAD;
#pragma unroll 4
  for (int j = 0; j < T::BC; ++j) {
    const float p = p_row[j];
    const half2* v_row = reinterpret_cast<const half2*>(sV + j * T::LD + col0);
#pragma unroll
    for (int c2 = 0; c2 < T::COLS_PER_THREAD / 2; ++c2) {
      const float2 vf = __half22float2(v_row[c2]);
      acc[2 * c2] = fmaf(p, vf.x, acc[2 * c2]);
      acc[2 * c2 + 1] = fmaf(p, vf.y, acc[2 * c2 + 1]);
    }
  }
}

}  // namespace fa
