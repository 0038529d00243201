// Step 9 - +wgmma (Hopper, sm_90a only): the two GEMMs move from per-warp mma.sync to
// warpgroup-wide wgmma.mma_async. Q K^T reads Q and K straight from 128-byte-swizzled shared
// memory through descriptors (no ldmatrix); P V takes P from registers and V from shared
// memory as a transposed operand. Two consumer warpgroups (128 query rows) share each K/V
// stage, so one's softmax overlaps the other's tensor-core work.
// Hypothesis: step 8 issues 4 ldmatrix per 8 mma.sync and keeps only 4 consumer warps busy
// (tensor pipe 20-27%, long-scoreboard stalls); wgmma's m64nN instructions carry 8-16x the
// work of one mma.sync each and read shared memory without register staging, so the tensor
// pipe is fed far better.
// Predicted: 1.5x-2.5x over +async pipeline at the large shapes; tensor pipe active above 40%.
#include "fa/common.cuh"
#include "fa/mma_attention.cuh"
#include "fa/pipeline.cuh"
#include "fa/softmax.cuh"
#include "fa/wgmma_attention.cuh"

namespace {

template <int D>
using Tile = fa::WgmmaTile<D, /*BC=*/D == 64 ? 128 : 64, /*KV_STAGES=*/D == 64 ? 3 : 4>;

template <int D>
__global__ void __launch_bounds__(Tile<D>::THREADS, 1)
    attention_fwd(const half* __restrict__ q, const half* __restrict__ k, const half* __restrict__ v,
                  half* __restrict__ o, fa::AttnShape shape) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using T = Tile<D>;
  namespace wg = fa::wgmma;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const typename T::Smem sm(smem_raw);
  const int tid = threadIdx.x, lane = tid % 32;
  const int q0 = blockIdx.x * T::BR;
  const size_t head = fa::head_offset<D>(shape);
  const int n_tiles = fa::kv_tile_count<T::BR, T::BC>(shape, q0);

  // Q by every thread, then made visible to wgmma (async proxy) before the roles split.
  fa::cp_async_tile_sw128<T::BR, D, T::THREADS>(sm.q, q + head + static_cast<size_t>(q0) * D, shape.S - q0, tid);
  fa::cp_async_wait_all();
  wg::fence_proxy_async();
  __shared__ fa::KvRing<T::KV_STAGES> ring;
  ring.init(32 * T::PRODUCER_WARPS, T::CONSUMER_THREADS);
  __syncthreads();
  if (tid >= T::CONSUMER_THREADS) {
    fa::produce_kv_tiles<T>(ring, sm, k + head, v + head, shape, n_tiles, tid - T::CONSUMER_THREADS);
    return;
  }

  const int warpgroup = tid / 128;
  const int wg_row0 = warpgroup * 64;               // this warpgroup's rows within the tile
  const int row0 = wg_row0 + (tid % 128) / 32 * 16;  // this warp's 16 rows
  const half* q_wg = sm.q + wg_row0 * 64;            // row offset inside every 64-column block
  const float scale_log2 = shape.scale * 1.4426950408889634f;
  float o_acc[D / 8][4] = {};
  fa::RowState rows[2];

  for (int tile = 0; tile < n_tiles; ++tile) {
    const int kv0 = tile * T::BC;
    const int stage = fa::acquire_kv_stage<T>(ring, tile);
    // Causal: a tile wholly above this warpgroup's diagonal holds nothing it may see.
    if (shape.causal && kv0 > q0 + wg_row0 + 63) {
      fa::release_kv_stage<T>(ring, tile);
      continue;
    }
    wg::fence_proxy_async();
    const half* k_tile = sm.k_stage(stage);
    const half* v_tile = sm.v_stage(stage);

    float s[T::BC / 8][4];
    wg::fence_registers(o_acc);
    wg::fence();
    wg::issue_scores<T>(s, q_wg, k_tile);
    wg::wait<0>();
    wg::fence_registers(s);

    float alpha[2];
    fa::mma_online_softmax<T>(s, rows, alpha, shape, q0 + row0, kv0, lane, scale_log2);
    fa::rescale_rows(o_acc, alpha);
    unsigned p[T::BC / 16][4];
    fa::pack_p_fragments<T>(p, s);

    wg::fence_registers(o_acc);
    wg::fence();
    wg::issue_pv<T>(o_acc, p, v_tile);
    wg::wait<0>();
    wg::fence_registers(o_acc);
    fa::release_kv_stage<T>(ring, tile);
  }

  fa::mma_store_output<T>(o + head + static_cast<size_t>(q0 + row0) * D, o_acc, rows, shape.S - q0 - row0, lane);
#endif
}

}  // namespace

FA_EXPORT_VARIANT(attention_fwd, Tile)
