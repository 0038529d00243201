// Step 8 - +async pipeline: the producer no longer waits for each tile's copies to land before
// starting the next; cp.async.mbarrier.arrive makes the copies signal the stage's "full" barrier
// themselves, and the ring is 4 stages deep at D = 64 (2 at D = 128, within sm_89's 99 KB).
// Hypothesis: step 7's consumers stall on tile arrival (top stall long scoreboard, tensor pipe
// 25%): one producer warp serialising issue -> wait -> arrive delivers one tile per memory
// latency. With several tiles in flight the tensor pipe should be fed.
// Predicted: 1.2x-2.0x over +mma.sync; long-scoreboard stalls fall, tensor pipe active rises.
#include "fa/common.cuh"
#include "fa/mma_attention.cuh"
#include "fa/pipeline.cuh"
#include "fa/softmax.cuh"
#include "fa/tile_io.cuh"

namespace {

template <int D>
using Tile = fa::MmaTile<D, /*KV_STAGES=*/D == 64 ? 4 : 2, /*PRODUCER_WARPS=*/1, /*ASYNC_ARRIVE=*/true>;

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
  const float scale_log2 = shape.scale * 1.4426950408889634f;
  unsigned qa[D / 16][4];
  fa::load_q_fragments<T>(qa, sm.q + row0 * T::LD, lane);
  float o_acc[D / 8][4] = {};
  fa::RowState rows[2];

  for (int tile = 0; tile < n_tiles; ++tile) {
    const int kv0 = tile * T::BC;
    const int stage = fa::acquire_kv_stage<T>(ring, tile);
    float s[T::BC / 8][4];
    fa::mma_scores<T>(s, qa, sm.k_stage(stage), lane);
    float alpha[2];
    fa::mma_online_softmax<T>(s, rows, alpha, shape, q0 + row0, kv0, lane, scale_log2);
    fa::mma_accumulate_pv<T>(o_acc, alpha, s, sm.v_stage(stage), lane);
    fa::release_kv_stage<T>(ring, tile);
  }

  fa::mma_store_output<T>(o + head + static_cast<size_t>(q0 + row0) * D, o_acc, rows, shape.S - q0 - row0, lane);
}

}  // namespace

FA_EXPORT_VARIANT(attention_fwd, Tile)
