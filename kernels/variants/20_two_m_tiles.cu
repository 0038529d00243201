// Step 20 - +two m-tiles per warp: each consumer warp owns 32 query rows (two 16-row
// m-tiles; BR = 128) instead of 16, so every K and V fragment it loads with ldmatrix feeds two
// mma.sync instead of one. At D = 128, where 32 rows of Q would not fit in registers beside O,
// the warp re-reads its Q fragments from shared memory at each tile (FlashAttention-2 does the
// same). Causal: a warp skips the tiles wholly above its own rows (with BR = 128 the block's
// last tile is invisible to warps 0 and 1). At D = 128 the key tile narrows to 32 (see Tile).
// Hypothesis: with 16 rows a warp, ldmatrix bytes per mma make shared memory the limiter (two
// mma per 512-byte ldmatrix.x4: at ~128 B/clk per SM, about as many cycles as the tensor
// pipe needs); halving them moves the limit back to the tensor pipe. Grids have half as many
// CTAs, which costs where they are already short of a wave (S = 512 with few heads).
// Predicted: 1.2x-1.6x over +copies by the consumers at (4, 16, 4096, 64); tensor pipe active up.
#include "fa/common.cuh"
#include "fa/mma_attention.cuh"
#include "fa/pipeline.cuh"
#include "fa/softmax.cuh"
#include "fa/tile_io.cuh"

namespace {

// D = 128 takes 32 keys a tile (three stages: still 64 keys in flight ahead, as in step 19): with
// 64, S (64 registers) beside O (128) and the Q fragments spills.
template <int D>
using Tile = fa::MmaTile<D, /*KV_STAGES=*/D == 64 ? 4 : 3, /*PRODUCER_WARPS=*/0, /*ASYNC_ARRIVE=*/false,
                         /*M_TILES=*/2, /*CTAS_PER_SM=*/1, /*BC=*/D == 64 ? 64 : 32>;

template <int D>
__global__ void __launch_bounds__(Tile<D>::THREADS, 1)
    attention_fwd(const half* __restrict__ q, const half* __restrict__ k, const half* __restrict__ v,
                  half* __restrict__ o, fa::AttnShape shape) {
  using T = Tile<D>;
  constexpr int MT = T::M_TILES;
  constexpr bool Q_IN_REGISTERS = D == 64;
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

  const int row0 = warp * T::WARP_ROWS;  // this warp's query rows within the tile
  const float scale_log2 = shape.scale * 1.4426950408889634f;
  const half* q_w = sm.q + row0 * T::LD;
  unsigned qa[Q_IN_REGISTERS ? MT : 1][Q_IN_REGISTERS ? D / 16 : 1][4];
  if constexpr (Q_IN_REGISTERS)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) fa::load_q_fragments<T>(qa[mt], q_w + mt * 16 * T::LD, lane);
  auto q_frag = [&](unsigned (&a)[4], int mt, int kk) {
    if constexpr (Q_IN_REGISTERS) {
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = qa[mt][kk][i];
    } else {
      fa::ldmatrix_x4(a, q_w + (mt * 16 + lane % 16) * T::LD + kk * 16 + (lane / 16) * 8);
    }
  };
  float o_acc[MT][D / 8][4] = {};
  fa::RowState rows[MT][2];
  const int last_row = q0 + row0 + T::WARP_ROWS - 1;  // causal: tiles past it are invisible here

  for (int tile = 0; tile < n_tiles; ++tile) {
    const int kv0 = tile * T::BC;
    fa::wait_kv_tile<T>();  // tile has landed; every warp is done with the stage refilled next
    fa::issue_kv_tile<T>(sm, k + head, v + head, shape, tile + T::KV_STAGES - 1, n_tiles, tid);
    if (shape.causal && kv0 > last_row) continue;
    const int stage = tile % T::KV_STAGES;
    float s[MT][T::BC / 8][4];
    fa::mma_scores_tiles<T>(s, q_frag, sm.k_stage(stage), lane);
    float alpha[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
      fa::mma_online_softmax<T>(s[mt], rows[mt], alpha[mt], shape, q0 + row0 + mt * 16, kv0, lane, scale_log2);
    fa::mma_accumulate_pv_tiles<T>(o_acc, alpha, s, sm.v_stage(stage), lane);
  }
  fa::cp_async_wait_all();  // only empty groups are left; nothing in flight when the block exits

#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const int r0 = row0 + mt * 16;
    fa::mma_store_output<T>(o + head + static_cast<size_t>(q0 + r0) * D, o_acc[mt], rows[mt], shape.S - q0 - r0, lane);
  }
}

}  // namespace

FA_EXPORT_VARIANT(attention_fwd, Tile)
