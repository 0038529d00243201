// The chunks of one (sequence, K/V head) merged inside a thread-block cluster (sm_90): each CTA keeps its
// chunk's result in its own shared memory and the cluster reads them through distributed shared memory,
// so a split call needs neither a workspace nor a second kernel (the decode branch's step 43).
#pragma once

#include <cooperative_groups.h>

#include "fa/decode.cuh"

namespace fa {
namespace {  // internal linkage, like the rest of fa/decode.cuh

constexpr int kMaxClusterSplits = 8;  // the portable cluster size: more chunks merge as before

// Whether a call's chunks merge in a cluster: split, into no more than a portable cluster holds.
__host__ __device__ inline bool merges_in_cluster(const SplitPartials& p) {
  return p.splits > 1 && p.splits <= kMaxClusterSplits;
}

// A CTA's chunk result in its shared memory: per packed row the max and the sum (log2 units, the sum
// relative to the max), then O (BR x D floats, not yet divided by the sum).
template <class T>
struct ChunkResult {
  static constexpr size_t BYTES = (2 * T::BR + T::BR * T::D) * sizeof(float);
  float* base;
  __device__ float& m(int r) const { return base[r]; }
  __device__ float& l(int r) const { return base[T::BR + r]; }
  __device__ float* o(int r) const { return base + 2 * T::BR + r * T::D; }
};

// The CTA's rows after decode_merge_warps (read from `red`), kept as its chunk's result: `keep` must not
// overlap `red`. THREADS: the threads that write.
template <class T, int THREADS = T::THREADS>
__device__ __forceinline__ void decode_keep_chunk(const float* red, ChunkResult<T> keep, int rows_here, int tid) {
  constexpr int CHUNKS = T::D / 8;
  for (int c = tid; c < rows_here * CHUNKS; c += THREADS) {
    const int r = c / CHUNKS, col = (c % CHUNKS) * 8;
    float acc[8], m_all, l_all;
    decode_merged_row<T>(red, r, col, acc, m_all, l_all);
    float4* dst = reinterpret_cast<float4*>(keep.o(r) + col);
    dst[0] = make_float4(acc[0], acc[1], acc[2], acc[3]);
    dst[1] = make_float4(acc[4], acc[5], acc[6], acc[7]);
    if (col == 0) keep.m(r) = m_all, keep.l(r) = l_all;
  }
}

// The cluster's chunk results merged into O once every CTA has kept its own (the caller syncs the
// cluster before, and again after, so that no CTA leaves while another reads it): CTA `rank` of `splits`
// writes every splits-th 8-column piece of the rows, reading the results in rank order (the same bits
// every call). A chunk a row sees no key of has max -inf and weighs 0.
template <class T>
__device__ __forceinline__ void decode_merge_cluster(ChunkResult<T> keep, const DecodeArgs& a, int b, int kv, int row0,
                                                     int rows_here, int splits, int rank, int tid, int threads) {
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  constexpr int CHUNKS = T::D / 8;
  auto* out = static_cast<typename T::Elem*>(a.o);
  for (int c = rank + splits * tid; c < rows_here * CHUNKS; c += splits * threads) {
    const int r = c / CHUNKS, col = (c % CHUNKS) * 8;
    float m_all = kNegInf;
    for (int j = 0; j < splits; ++j) m_all = fmaxf(m_all, ChunkResult<T>{cluster.map_shared_rank(keep.base, j)}.m(r));
    float acc[8] = {}, l_all = 0.0f;
    for (int j = 0; j < splits; ++j) {
      const ChunkResult<T> other{cluster.map_shared_rank(keep.base, j)};
      const float m = other.m(r);
      if (m == kNegInf) continue;
      const float w = softmax_exp2<true>(m - m_all);
      l_all += w * other.l(r);
      const float4* src = reinterpret_cast<const float4*>(other.o(r) + col);
      const float4 x0 = src[0], x1 = src[1];
      acc[0] += w * x0.x, acc[1] += w * x0.y, acc[2] += w * x0.z, acc[3] += w * x0.w;
      acc[4] += w * x1.x, acc[5] += w * x1.y, acc[6] += w * x1.z, acc[7] += w * x1.w;
    }
    // Every row sees a key of its whole sequence (query i sees n - q_len + 1 + i >= 1 keys): l_all > 0.
    store8<typename T::Elem>(out + query_offset<T::D>(a, b, kv, row0 + r) + col, acc, 1.0f / l_all);
  }
}

}  // namespace
}  // namespace fa
