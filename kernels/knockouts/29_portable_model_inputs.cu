// The switchable twin of step 29 (portable_model_inputs, the portable branch's end):
// kernels/variants/29_portable_model_inputs.cu with knock-out switches. Each FA_* macro below at its
// default (1) keeps one earlier step's idea; 0 takes it out, for the knock-out half of the ablation
// (the manifest's [[switch]] tables). lab builds a configuration with defines from this file and
// the step as written from the step's own, so that a neighbour diff in kernels/variants/ shows one
// idea; at its defaults this file compiles to the step's SASS byte for byte
// (tests/test_knockouts.py checks it). Every configuration takes what the step takes: fp16 and
// bf16, K/V heads any divisor of the query heads.
//
// Step 29 - +model inputs (portable): bf16 as well as fp16, and K/V with fewer heads than Q
// (grouped-query and multi-query attention, SDPA's enable_gqa: query head h reads K/V head
// h / (H / H_kv)), as step 28 does on the sm_90a branch.
// Hypothesis: it costs nothing on fp16 multi-head shapes (one integer division per CTA), and a
// bf16 kernel runs as fast as the fp16 one.
// Predicted: 0.99x-1.01x over +small-grid tiles (fp16, the ladder's shapes): within noise.
#include "fa/common.cuh"
#include "fa/mma_attention.cuh"
#include "fa/pipeline.cuh"
#include "fa/softmax.cuh"
#include "fa/tile_io.cuh"
#include "fa/tile_size.cuh"

#include <type_traits>

// Knock-out switches (the portable branch's).
#ifndef FA_SMALL_GRID_TILES  // step 25: 0 -> every grid takes the 128-row tile
#define FA_SMALL_GRID_TILES 1
#endif
#ifndef FA_LAZY_RESCALE  // step 24: 0 -> every tile updates the running max and rescales O
#define FA_LAZY_RESCALE 1
#endif
#ifndef FA_KK_OUTER  // step 23: 0 -> Q K^T with the key tile outside (dependent mma back to back)
#define FA_KK_OUTER 1
#endif
#ifndef FA_FTZ_EXP2  // step 22: 0 -> exp2f, with ptxas's subnormal fix-up
#define FA_FTZ_EXP2 1
#endif
#ifndef FA_UNMASKED_INTERIOR  // step 21: 0 -> every key tile runs the visibility test
#define FA_UNMASKED_INTERIOR 1
#endif
#ifndef FA_TWO_M_TILES  // step 20: 0 -> every grid takes the 64-row tile (16 query rows a warp)
#define FA_TWO_M_TILES 1
#endif

namespace {

constexpr bool kSmallGridTiles = FA_SMALL_GRID_TILES, kLazyRescale = FA_LAZY_RESCALE, kKkOuter = FA_KK_OUTER;
constexpr bool kFtzExp2 = FA_FTZ_EXP2, kUnmaskedInterior = FA_UNMASKED_INTERIOR, kTwoMTiles = FA_TWO_M_TILES;

// MT: m-tiles per warp, 2 unless the grid is small (see launch_for_grid); fa::PortableTile gives
// D = 128 32-key tiles at two m-tiles.
template <class Elem, int D, int MT = 2>
using Tile = fa::PortableTile<D, MT, Elem>;

template <class Elem, int D, int MT>
__global__ void __launch_bounds__(Tile<Elem, D, MT>::THREADS, 1)
    attention_fwd(const Elem* __restrict__ q, const Elem* __restrict__ k, const Elem* __restrict__ v,
                  Elem* __restrict__ o, fa::AttnShape shape) {
  using T = Tile<Elem, D, MT>;
  constexpr bool Q_IN_REGISTERS = D == 64 || MT == 1;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const typename T::Smem sm(smem_raw);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int q0 = blockIdx.x * T::BR;
  const size_t head = fa::head_offset<D>(shape);
  const size_t kv_head =
      static_cast<size_t>(fa::kv_head_index(shape, blockIdx.z * shape.H + blockIdx.y)) * shape.S * D;
  const int n_tiles = fa::kv_tile_count<T::BR, T::BC>(shape, q0);

  // The first KV_STAGES - 1 tiles are in flight while Q is copied.
  for (int tile = 0; tile < T::KV_STAGES - 1; ++tile)
    fa::issue_kv_tile<T>(sm, k + kv_head, v + kv_head, shape, tile, n_tiles, tid);
  fa::load_tile_vec16<T::BR, D, T::LD, T::THREADS>(sm.q, q + head + static_cast<size_t>(q0) * D,
                                                    shape.S - q0, tid);
  __syncthreads();

  const int row0 = warp * T::WARP_ROWS;  // this warp's query rows within the tile
  const float scale_log2 = shape.scale * 1.4426950408889634f;
  const Elem* q_w = sm.q + row0 * T::LD;
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
    fa::issue_kv_tile<T>(sm, k + kv_head, v + kv_head, shape, tile + T::KV_STAGES - 1, n_tiles, tid);
    if (shape.causal && kv0 > last_row) continue;
    const int stage = tile % T::KV_STAGES;
    float s[MT][T::BC / 8][4];
    if constexpr (kKkOuter) fa::mma_scores_tiles_kk_outer<T>(s, q_frag, sm.k_stage(stage), lane);
    else fa::mma_scores_tiles<T>(s, q_frag, sm.k_stage(stage), lane);
    float alpha[MT][2];
    auto softmax = [&](auto mask) {  // returns whether O is rescaled for this tile
      constexpr bool MASK = decltype(mask)::value;
      if constexpr (kLazyRescale) {
        return fa::mma_online_softmax_lazy<T, MASK, kFtzExp2>(s, rows, alpha, shape, q0 + row0, kv0, lane, scale_log2);
      } else {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
          fa::mma_online_softmax<T, MASK, kFtzExp2>(s[mt], rows[mt], alpha[mt], shape, q0 + row0 + mt * 16, kv0, lane,
                                                    scale_log2);
        return true;
      }
    };
    // Only tiles crossing the end of the sequence or (causal) this warp's diagonal need the mask.
    const bool rescale = kUnmaskedInterior && kv0 + T::BC <= shape.S && (!shape.causal || kv0 + T::BC - 1 <= q0 + row0)
                             ? softmax(std::false_type{})
                             : softmax(std::true_type{});
    fa::mma_accumulate_pv_tiles<T>(o_acc, alpha, s, sm.v_stage(tile % T::KV_STAGES), lane, rescale);
  }
  fa::cp_async_wait_all();  // only empty groups are left; nothing in flight when the block exits

#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const int r0 = row0 + mt * 16;
    fa::mma_store_output<T>(o + head + static_cast<size_t>(q0 + r0) * D, o_acc[mt], rows[mt], shape.S - q0 - r0, lane);
  }
}

// Grids too small for the SMs take 16 query rows a warp (BR = 64): twice the CTAs, each half as
// long. Below one 128-row CTA per SM, the 64-row grid finishes sooner even though each of its
// mma loads twice the shared-memory bytes. (fa_tile_rows reports the 128-row tile.)
template <class Elem, int D>
struct LaunchForGrid {
  static int run(const Elem* q, const Elem* k, const Elem* v, Elem* o, const fa::AttnShape& shape,
                 cudaStream_t stream) {
    if constexpr (!kTwoMTiles) {
      return fa::launch<Tile<Elem, D, 1>>(attention_fwd<Elem, D, 1>, shape, stream, q, k, v, o);
    } else {
      if constexpr (kSmallGridTiles) {
        int sms = 0;
        if (int err = fa::multiprocessor_count(&sms)) return err;
        const long long ctas = static_cast<long long>(fa::ceil_div(shape.S, Tile<Elem, D, 2>::BR)) * shape.B * shape.H;
        if (ctas < sms) return fa::launch<Tile<Elem, D, 1>>(attention_fwd<Elem, D, 1>, shape, stream, q, k, v, o);
      }
      return fa::launch<Tile<Elem, D, 2>>(attention_fwd<Elem, D, 2>, shape, stream, q, k, v, o);
    }
  }
};

template <int D>
using LargeGridTile = Tile<half, D, kTwoMTiles ? 2 : 1>;  // the bf16 tile has the same sizes

}  // namespace

FA_EXPORT_MODEL_VARIANT(LaunchForGrid, LargeGridTile)
