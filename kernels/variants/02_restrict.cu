// Step 2 - +restrict: every pointer parameter becomes `const half* __restrict__` (O: `half*
// __restrict__`), promising the compiler that Q, K, V and O never alias.
// Hypothesis: lets loads use the read-only path (LDG.E.CONSTANT) and be hoisted past stores;
// the kernel is bound by uncoalesced loads and bank conflicts, which this does not touch.
// Predicted: within noise to 1.05x; global load instruction mix changes, DRAM throughput does not.
#include "fa/common.cuh"
#include "fa/scalar.cuh"
#include "fa/softmax.cuh"
#include "fa/tile_io.cuh"

namespace {

template <int D>
using Tile = fa::ScalarTile<D, /*PAD=*/0>;

template <int D>
__global__ void __launch_bounds__(Tile<D>::THREADS, 1)
    attention_fwd(const half* __restrict__ q, const half* __restrict__ k, const half* __restrict__ v,
                  half* __restrict__ o, fa::AttnShape shape) {
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
