// The switchable twin of step 18 (ftz_exp2, the sm_90a branch's end before the persistent steps
// 26-27): kernels/variants/18_ftz_exp2.cu with knock-out switches. Each FA_* macro below at its
// default (1) keeps one earlier step's idea; 0 takes it out, for the knock-out half of the ablation
// (the manifest's [[switch]] tables). lab builds a configuration with defines from this file and
// the step as written from the step's own, so that a neighbour diff in kernels/variants/ shows one
// idea; at its defaults this file compiles to the step's SASS byte for byte
// (tests/test_knockouts.py checks it).
//
// Step 18 - +exp2 without the subnormal fix-up: the softmax's exponentials are ex2.approx.ftz.f32,
// a bare MUFU.EX2, instead of exp2f (ex2.approx.f32), which ptxas surrounds with a compare and
// two predicated multiplies so that results below 2^-126 come out subnormal instead of zero.
// Hypothesis: the consumers' issue slots go to the softmax, and the fix-up is three of its
// roughly eight instructions per score. Nothing is lost: P is rounded to fp16, whose smallest
// value is 2^-24, and alpha below 2^-126 scales an O that is then negligible anyway.
// Predicted: 1.03x-1.15x over +ping-pong, more at D = 64 (less GEMM per score).
#include "fa/common.cuh"
#include "fa/mma_attention.cuh"
#include "fa/pipeline.cuh"
#include "fa/softmax.cuh"
#include "fa/tile_size.cuh"
#include "fa/tma.cuh"
#include "fa/wgmma_attention.cuh"

// Knock-out switches. Step 2's __restrict__ is no switch: without it this kernel compiles to the
// same SASS (every input is read by TMA, and O is only stored).
#ifndef FA_FTZ_EXP2  // step 18: 0 -> exp2f, with ptxas's subnormal fix-up
#define FA_FTZ_EXP2 1
#endif
#ifndef FA_PING_PONG  // step 17 (D = 128): 0 -> the two consumer warpgroups issue unordered
#define FA_PING_PONG 1
#endif
#ifndef FA_UNMASKED_INTERIOR  // step 15: 0 -> every key tile runs the visibility test
#define FA_UNMASKED_INTERIOR 1
#endif
#ifndef FA_TMA_Q  // step 14: 0 -> every thread copies Q with cp.async before the roles split
#define FA_TMA_Q 1
#endif
#ifndef FA_TMA_KV  // step 12: 0 -> the producer warps copy K/V with cp.async, arriving on the ring
#define FA_TMA_KV 1
#endif
#ifndef FA_WGMMA_OVERLAP  // step 11: 0 -> S_j, its softmax, then P_j V_j, each waited on in series
#define FA_WGMMA_OVERLAP 1
#endif
// Without TMA for Q or K/V the kernel also takes the raw pointers (after the tensor maps, so the
// default's parameter layout is step 18's).
#if FA_TMA_Q && FA_TMA_KV
#define FA_RAW_INPUT_PARAMS
#define FA_RAW_INPUT_ARGS
#else
#define FA_RAW_INPUT_PARAMS \
  , const half* __restrict__ q, const half* __restrict__ k, const half* __restrict__ v
#define FA_RAW_INPUT_ARGS , q, k, v
#endif

namespace {

constexpr bool kFtzExp2 = FA_FTZ_EXP2, kPingPong = FA_PING_PONG, kUnmaskedInterior = FA_UNMASKED_INTERIOR;
constexpr bool kTmaQ = FA_TMA_Q, kTmaKv = FA_TMA_KV, kWgmmaOverlap = FA_WGMMA_OVERLAP;
static_assert(kWgmmaOverlap || !kPingPong, "ping-pong (step 17) is built on the overlapped loop: FA_PING_PONG=0 too");

template <int D>
using Tile = fa::HopperTile<D, kTmaKv>;  // its FA_TILE_* constants: tuning trials; steps 13 and 16's knock-outs

template <int D>
__global__ void __launch_bounds__(Tile<D>::THREADS, Tile<D>::CTAS_PER_SM)
    attention_fwd(half* __restrict__ o, const __grid_constant__ CUtensorMap q_map,
                  const __grid_constant__ CUtensorMap k_map, const __grid_constant__ CUtensorMap v_map
                  FA_RAW_INPUT_PARAMS, fa::AttnShape shape) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using T = Tile<D>;
  namespace wg = fa::wgmma;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const typename T::Smem sm(smem_raw);
  const int tid = threadIdx.x, lane = tid % 32;
  const int q0 = blockIdx.x * T::BR;
  const size_t head = fa::head_offset<D>(shape);  // of O
  const int n_tiles = fa::kv_tile_count<T::BR, T::BC>(shape, q0);

  __shared__ fa::KvRing<T::KV_STAGES> ring;
  __shared__ uint64_t q_full;
  // Producer arrivals per stage: the one TMA thread that also sets the byte count, or every
  // producer thread's cp.async arrival.
  ring.init(kTmaKv ? 1 : 32 * T::PRODUCER_WARPS, T::CONSUMER_THREADS);
  if (tid == 0) {
    fa::mbarrier_init(&q_full, 1);
    fa::tma::fence_barrier_init();
  }
#if !FA_TMA_Q  // Q by every thread, then made visible to wgmma (async proxy)
  fa::cp_async_tile_sw128<T::BR, D, T::THREADS>(sm.q, q + head + static_cast<size_t>(q0) * D, shape.S - q0, tid);
  fa::cp_async_wait_all();
  wg::fence_proxy_async();
#endif
  __syncthreads();
  if (tid >= T::CONSUMER_THREADS) {
    wg::set_max_registers<T::PRODUCER_REGISTERS, false>();
    if (tid == T::CONSUMER_THREADS) {
      const int bh = blockIdx.z * shape.H + blockIdx.y;
      if constexpr (kTmaQ) {
        fa::tma::arrive_expect_bytes(&q_full, T::BR * D * sizeof(half));
        fa::tma::load_tile<T::BR, D>(sm.q, &q_map, q0, bh, &q_full);
      }
      if constexpr (kTmaKv) fa::tma::produce_kv_tiles<T>(ring, sm, &k_map, &v_map, bh, n_tiles);
    }
#if !FA_TMA_KV
    fa::produce_kv_tiles<T>(ring, sm, k + head, v + head, shape, n_tiles, tid - T::CONSUMER_THREADS);
#endif
    return;
  }

  wg::set_max_registers<T::CONSUMER_REGISTERS, true>();
  const int warpgroup = tid / 128;
  const int wg_row0 = warpgroup * 64;               // this warpgroup's rows within the tile
  const int row0 = wg_row0 + (tid % 128) / 32 * 16;  // this warp's 16 rows
  const half* q_wg = sm.q + wg_row0 * 64;            // row offset inside every 64-column block
  const float scale_log2 = shape.scale * 1.4426950408889634f;
  // Causal: this warpgroup's rows see fewer tiles than the block's; the rest it only releases.
  const int n_mine = shape.causal ? fa::kv_tile_count<64, T::BC>(shape, q0 + wg_row0) : n_tiles;
  // Each warpgroup takes n_tiles + 1 turns (one per issue; empty ones past n_mine). Warpgroup 0
  // goes first; warpgroup 1 skips its last hand-over, which nobody waits for.
  constexpr bool PING_PONG = kPingPong && T::CONSUMER_WARPGROUPS == 2;
  if constexpr (PING_PONG)
    if (warpgroup == 1) wg::pass_turn(warpgroup);
  auto my_turn = [&] {
    if constexpr (PING_PONG) wg::wait_turn(warpgroup);
  };
  auto end_turn = [&](bool last) {
    if constexpr (PING_PONG)
      if (!(last && warpgroup == 1)) wg::pass_turn(warpgroup);
  };
  float o_acc[D / 8][4] = {};
  fa::RowState rows[2];
  float s[T::BC / 8][4];
  unsigned p[T::BC / 16][4];
  float alpha[2];

  // Only tiles crossing the end of the sequence or (causal) the diagonal need the mask test.
  auto softmax_tile = [&](int kv0) {
    if (kUnmaskedInterior && kv0 + T::BC <= shape.S && (!shape.causal || kv0 + T::BC - 1 <= q0 + row0))
      fa::mma_online_softmax<T, /*MASK=*/false, kFtzExp2>(s, rows, alpha, shape, q0 + row0, kv0, lane, scale_log2);
    else
      fa::mma_online_softmax<T, /*MASK=*/true, kFtzExp2>(s, rows, alpha, shape, q0 + row0, kv0, lane, scale_log2);
  };
  // cp.async copies land through the generic proxy: fence before wgmma reads them (TMA needs none).
  auto acquire = [&](int tile) {
    const int st = fa::acquire_kv_stage<T>(ring, tile);
    if constexpr (!kTmaKv) wg::fence_proxy_async();
    return st;
  };
  if constexpr (kTmaQ) fa::mbarrier_wait(&q_full, 0);

  if constexpr (!kWgmmaOverlap) {  // knock-out of step 11: GEMM -> softmax -> GEMM, in series
    for (int tile = 0; tile < n_mine; ++tile) {
      const int st = acquire(tile);
      wg::fence_registers(o_acc);
      wg::fence();
      wg::issue_scores<T>(s, q_wg, sm.k_stage(st));
      wg::wait<0>();
      wg::fence_registers(s);
      softmax_tile(tile * T::BC);
      fa::rescale_rows(o_acc, alpha);
      fa::pack_p_fragments<T>(p, s);
      wg::fence_registers(o_acc);
      wg::fence();
      wg::issue_pv<T>(o_acc, p, sm.v_stage(st));
      wg::wait<0>();
      wg::fence_registers(o_acc);
      wg::fence_registers(p);
      fa::release_kv_stage<T>(ring, tile);
    }
    for (int tile = n_mine; tile < n_tiles; ++tile) {
      fa::acquire_kv_stage<T>(ring, tile);
      fa::release_kv_stage<T>(ring, tile);
    }
    fa::mma_store_output<T>(o + head + static_cast<size_t>(q0 + row0) * D, o_acc, rows, shape.S - q0 - row0, lane);
    return;
  }

  // Prologue: tile 0's scores and softmax (O is still zero: its alpha is moot).
  int stage = acquire(0);
  wg::fence();
  my_turn();
  wg::issue_scores<T>(s, q_wg, sm.k_stage(stage));
  end_turn(false);
  wg::wait<0>();
  wg::fence_registers(s);
  softmax_tile(0);
  fa::pack_p_fragments<T>(p, s);

  for (int tile = 1; tile < n_mine; ++tile) {
    const int prev_stage = stage;
    stage = acquire(tile);
    wg::fence_registers(o_acc);
    wg::fence();
    my_turn();
    wg::issue_scores<T>(s, q_wg, sm.k_stage(stage));  // S_j ...
    wg::issue_pv<T>(o_acc, p, sm.v_stage(prev_stage));  // ... and P_{j-1} V_{j-1} behind it
    end_turn(false);
    wg::wait<1>();                                       // S_j has landed
    wg::fence_registers(s);
    softmax_tile(tile * T::BC);
    wg::wait<0>();  // P_{j-1} V_{j-1} has landed: O may be rescaled, P overwritten, the stage freed
    wg::fence_registers(o_acc);
    wg::fence_registers(p);
    fa::release_kv_stage<T>(ring, tile - 1);
    fa::rescale_rows(o_acc, alpha);
    fa::pack_p_fragments<T>(p, s);
  }
  wg::fence_registers(o_acc);
  wg::fence();
  my_turn();
  wg::issue_pv<T>(o_acc, p, sm.v_stage(stage));
  end_turn(n_mine == n_tiles);
  wg::wait<0>();
  wg::fence_registers(o_acc);
  fa::release_kv_stage<T>(ring, n_mine - 1);
  for (int tile = n_mine; tile < n_tiles; ++tile) {
    fa::acquire_kv_stage<T>(ring, tile);
    fa::release_kv_stage<T>(ring, tile);
    my_turn();  // an empty turn
    end_turn(tile == n_tiles - 1);
  }

  fa::mma_store_output<T>(o + head + static_cast<size_t>(q0 + row0) * D, o_acc, rows, shape.S - q0 - row0, lane);
#endif
}

// Host side: tensor maps for Q, K and V, then the launch.
template <int D>
int launch_with_tensor_maps(const half* q, const half* k, const half* v, half* o, const fa::AttnShape& shape,
                            cudaStream_t stream) {
  CUtensorMap q_map, k_map, v_map;
  if (int err = fa::tma::make_head_map(&q_map, q, shape, D, Tile<D>::BR)) return err;
  if (int err = fa::tma::make_head_map(&k_map, k, shape, D, Tile<D>::BC)) return err;
  if (int err = fa::tma::make_head_map(&v_map, v, shape, D, Tile<D>::BC)) return err;
  return fa::launch<Tile<D>>(attention_fwd<D>, shape, stream, o, q_map, k_map, v_map FA_RAW_INPUT_ARGS);
}

}  // namespace

FA_EXPORT_VARIANT_WITH(launch_with_tensor_maps, Tile)
