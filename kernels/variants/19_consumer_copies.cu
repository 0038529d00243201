// Step 19 - +copies by the consumers (portable branch, after step 8): no producer warp. The four
// consumer warps issue each K/V tile's cp.async themselves, KV_STAGES - 1 tiles ahead, and one
// __syncthreads per tile (after cp.async.wait_group) replaces the mbarrier hand-off: the
// FlashAttention-2 arrangement.
// Hypothesis: at D = 128 step 8 holds 213 registers a thread, and its fifth (producer) warp pays
// them too: 5 warps x 32 x 216 registers leave room for one CTA per SM (4 MMA warps, one per
// scheduler). Without it a CTA needs 4 x 32 x 216 and two fit: achieved occupancy doubles at
// D = 128. At D = 64 (165 registers, already two CTAs per SM) little changes.
// Predicted: 1.3x-1.8x over +async pipeline at (4, 16, 4096, 128); 0.95x-1.1x at D = 64.
#include "fa/common.cuh"
#include "fa/mma_attention.cuh"
#include "fa/pipeline.cuh"
#include "fa/softmax.cuh"
#include "fa/tile_io.cuh"

namespace {

template <int D>
using Tile = fa::MmaTile<D, /*KV_STAGES=*/D == 64 ? 4 : 2, /*PRODUCER_WARPS=*/0>;

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

  // The first KV_STAGES - 1 tiles are in flight while Q is copied.
  for (int tile = 0; tile < T::KV_STAGES - 1; ++tile)
    fa::issue_kv_tile<T>(sm, k + head, v + head, shape, tile, n_tiles, tid);
  fa::load_tile_vec16<T::BR, D, T::LD, T::THREADS>(sm.q, q + head + static_cast<size_t>(q0) * D,
                                                    shape.S - q0, tid);
  __syncthreads();

  const int row0 = warp * 16;  // this warp's query rows within the tile
  const float scale_log2 = shape.scale * 1.4426950408889634f;
  unsigned qa[D / 16][4];
  fa::load_q_fragments<T>(qa, sm.q + row0 * T::LD, lane);
  float o_acc[D / 8][4] = {};
  fa::RowState rows[2];

  for (int tile = 0; tile < n_tiles; ++tile) {
    const int kv0 = tile * T::BC;
    fa::wait_kv_tile<T>();  // tile has landed; every warp is done with the stage refilled next
    fa::issue_kv_tile<T>(sm, k + head, v + head, shape, tile + T::KV_STAGES - 1, n_tiles, tid);
    const int stage = tile % T::KV_STAGES;
    float s[T::BC / 8][4];
    fa::mma_scores<T>(s, qa, sm.k_stage(stage), lane);
    float alpha[2];
    fa::mma_online_softmax<T>(s, rows, alpha, shape, q0 + row0, kv0, lane, scale_log2);
    fa::mma_accumulate_pv<T>(o_acc, alpha, s, sm.v_stage(stage), lane);
  }
  fa::cp_async_wait_all();  // only empty groups are left; nothing in flight when the block exits

  fa::mma_store_output<T>(o + head + static_cast<size_t>(q0 + row0) * D, o_acc, rows, shape.S - q0 - row0, lane);
}

}  // namespace

FA_EXPORT_VARIANT(attention_fwd, Tile)
