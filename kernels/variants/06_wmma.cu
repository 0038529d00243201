// Step 6 - +WMMA: S = Q K^T and O += P V run on tensor cores through nvcuda::wmma (m16n16k16,
// fp16 inputs, fp32 accumulation). Four consumer warps own 16 query rows each and keep O in
// accumulator fragments for the whole kernel; the producer warp and the double buffer of
// step 5 are unchanged.
// Hypothesis: the scalar FMA loop was the bottleneck; tensor pipe utilisation goes from 0 to a
// visible share, and the S/P round trip through shared memory becomes the new limiter.
// Predicted: 5x-15x over +warp-specialization, at least 100 TFLOP/s at (4, 16, 4096, 64).
#include "fa/common.cuh"
#include "fa/pipeline.cuh"
#include "fa/softmax.cuh"
#include "fa/tile_io.cuh"
#include "fa/wmma_attention.cuh"

namespace {

template <int D>
using Tile = fa::WmmaTile<D>;

template <int D>
__global__ void __launch_bounds__(Tile<D>::THREADS, 1)
    attention_fwd(const half* __restrict__ q, const half* __restrict__ k, const half* __restrict__ v,
                  half* __restrict__ o, fa::AttnShape shape) {
  using T = Tile<D>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const typename T::Smem sm(smem_raw);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int q0 = blockIdx.x * T::BR;
  const size_t head = fa::head_offset<D>(shape);
  const int n_tiles = fa::kv_tile_count<T::BR, T::BC>(shape, q0);

  fa::load_tile_vec16<T::BR, D, T::LD, T::THREADS>(sm.q, q + head + static_cast<size_t>(q0) * D,
                                                    shape.S - q0, tid);
  __shared__ fa::KvRing<T::KV_STAGES> ring;
  ring.init(32 * T::PRODUCER_WARPS, T::CONSUMER_THREADS);
  __syncthreads();  // the last barrier all warps share; roles split here
  if (tid >= T::CONSUMER_THREADS) {
    fa::produce_kv_tiles<T>(ring, sm, k + head, v + head, shape, n_tiles, tid - T::CONSUMER_THREADS);
    return;
  }

  const int row0 = warp * 16;  // this warp's query rows within the tile
  float* s_w = sm.s + row0 * T::LDS;
  half* p_w = sm.p + row0 * T::LDP;
  int acc_rows[fa::FragAcc::num_elements];
  fa::accumulator_rows(acc_rows, s_w, T::LDS, lane);
  fa::FragAcc o_frag[D / 16];
#pragma unroll
  for (int f = 0; f < D / 16; ++f) fa::wmma::fill_fragment(o_frag[f], 0.0f);

  fa::RowState state;
  for (int tile = 0; tile < n_tiles; ++tile) {
    const int kv0 = tile * T::BC;
    const int stage = fa::acquire_kv_stage<T>(ring, tile);
    fa::wmma_scores<T>(s_w, sm.q + row0 * T::LD, sm.k_stage(stage));
    __syncwarp();
    fa::wmma_softmax_rows<T>(s_w, p_w, sm.alpha + row0, state, shape, q0 + row0, kv0, lane);
    __syncwarp();
    fa::wmma_accumulate_pv<T>(o_frag, acc_rows, sm.alpha + row0, p_w, sm.v_stage(stage));
    fa::release_kv_stage<T>(ring, tile);
  }

  if (lane % 2 == 0) sm.inv_l[row0 + lane / 2] = fa::inverse_sum(state);
  __syncwarp();
  fa::wmma_store_output<T>(o + head + static_cast<size_t>(q0 + row0) * D, o_frag, acc_rows,
                           sm.inv_l + row0, s_w, shape.S - q0 - row0, lane);
}

}  // namespace

FA_EXPORT_VARIANT(attention_fwd, Tile)
