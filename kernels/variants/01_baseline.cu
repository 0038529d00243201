// Step 1 - baseline: a FlashAttention-1 style forward kernel on CUDA cores.
//
// One block per (64-query tile, head, batch). Q, K and V tiles live in shared memory; scores,
// online softmax (running max and sum) and the output accumulator are fp32. Loads are written
// the simple way: each thread copies whole rows, one half at a time, and writes its slice of
// the output the same way.
// Hypothesis: memory-instruction bound (uncoalesced 2-byte global accesses, 4- to 8-way shared
// memory bank conflicts); the reference point every later step is measured against.
#include "fa/common.cuh"
#include "fa/scalar.cuh"
#include "fa/softmax.cuh"
#include "fa/tile_io.cuh"

namespace {

template <int D>
using Tile = fa::ScalarTile<D, /*PAD=*/0>;

template <int D>
__global__ void __launch_bounds__(Tile<D>::THREADS, 1)
    attention_fwd(const half* q, const half* k, const half* v, half* o, fa::AttnShape shape) {
  using T = Tile<D>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const typename T::Smem sm(smem_raw);
  const int tid = threadIdx.x, row = tid / T::TPR, part = tid % T::TPR;
  const int q0 = blockIdx.x * T::BR, query = q0 + row;
  const size_t head = fa::head_offset<D>(shape);

  fa::load_rows_naive<T::BR, D, T::LD>(sm.q, q + head + static_cast<size_t>(q0) * D, shape.S - q0, tid);

  fa::RowState state;
  float acc[T::COLS_PER_THREAD] = {};
  const int n_tiles = fa::kv_tile_count<T::BR, T::BC>(shape, q0);
  for (int tile = 0; tile < n_tiles; ++tile) {
    const int kv0 = tile * T::BC;
    __syncthreads();  // nobody reads the previous K, V (or P) any more
    fa::load_rows_naive<T::BC, D, T::LD>(sm.k, k + head + static_cast<size_t>(kv0) * D, shape.S - kv0, tid);
    fa::load_rows_naive<T::BC, D, T::LD>(sm.v, v + head + static_cast<size_t>(kv0) * D, shape.S - kv0, tid);
    __syncthreads();

    float s[T::KEYS_PER_THREAD];
    fa::scalar_scores<T>(s, sm.q, sm.k, row, part);
    fa::scale_and_mask(s, shape, query, [&](int n) { return fa::scalar_key<T>(kv0, part, n); });
    const float alpha = fa::online_softmax_update<T::TPR>(s, state);
    fa::write_probabilities<T>(sm.p, s, row, part);
    __syncwarp();  // P[row] is shared by the row's 4 lanes only
    fa::scalar_accumulate_pv<T>(acc, alpha, sm.p, sm.v, row, part);
  }

  if (query < shape.S)
    fa::store_slice_naive(o + head + static_cast<size_t>(query) * D + part * T::COLS_PER_THREAD, acc,
                          fa::inverse_sum(state));
}

}  // namespace

FA_EXPORT_VARIANT(attention_fwd, Tile)
