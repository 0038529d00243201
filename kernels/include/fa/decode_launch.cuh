// The decode launcher of steps 54 on: the TMA tile's calls (up to 32 packed query rows a K/V head, 16 or 32 rows a
// CTA) with their chunks counted over one CTA an SM (fa::split_chunks_one_cta_an_sm, step 54), a wide call's
// (more than 32 rows) on the 16-row tile's row blocks or step 46's row warps as the step's WideRule decides, the
// merge of a split call side by side or walked (step 47). A step's file gives its rule:
//   static bool takes_row_blocks(long long pairs, long long wave, long long sms, int capacity, int BC,
//                                fa::SplitPartials& p);
// pairs: the wide call's (16-row block, sequence, K/V head) pairs; wave: SMs x the 16-row tile's CTAs an SM; p: the
// row blocks' plan where it returns true. PREFETCH_MAPS (step 57 on): the kernels' producers prefetch their tensor
// maps. Promotion (step 70 on): the cache maps' L2 promotion, chosen per launch (FixedPromotion: the knob's).
// Included by the steps' translation units into their anonymous namespace (internal linkage: each step's library its
// own kernels and occupancy caches).
#pragma once

#include "fa/decode_row_warps.cuh"

#ifndef FA_DECODE_L2_PROMOTION
#define FA_DECODE_L2_PROMOTION CU_TENSOR_MAP_L2_PROMOTION_NONE  // a knob for explorations (-D), not a switch
#endif

namespace {

// How much of L2 a request of the cache's tensor maps brings in: steps 45-57, FA_DECODE_L2_PROMOTION everywhere.
struct FixedPromotion {
  static int choose(CUtensorMapL2promotion* promotion) {
    *promotion = FA_DECODE_L2_PROMOTION;
    return 0;
  }
};

// Step 70's: 256-byte promotion on a GPU of at most MAX_L2_MB MB of L2 (an H100's 50), none elsewhere (an H200's 60).
template <long long MAX_L2_MB>
struct PromotionByL2 {
  static int choose(CUtensorMapL2promotion* promotion) {
    int l2 = 0;
    if (int err = fa::l2_cache_bytes(&l2)) return err;
    *promotion = static_cast<long long>(l2) <= (MAX_L2_MB << 20) ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                                                                 : CU_TENSOR_MAP_L2_PROMOTION_NONE;
    return 0;
  }
};

template <class Elem, int D, class WideRule, bool PREFETCH_MAPS = false, class Promotion = FixedPromotion>
struct LaunchDecodeWide {
  // The SMs and the wave of CTAs (SMs x the kernel's CTAs an SM at `threads` a CTA): the occupancy calculator's,
  // once a kernel and CTA size (internal linkage: per library), of the fp16 kernel for both element types, so
  // that workspace_bytes (which has no type) plans alike.
  template <class Tile, class Kernel>
  static int wave_for(Kernel fp16_kernel, int threads, long long* wave, int* sms) {
    static int per_sm[33] = {};  // by warps a CTA
    int& here = per_sm[threads / 32];
    if (int err = fa::multiprocessor_count(sms)) return err;
    if (here == 0) {
      if (int err = fa::opt_in_shared_memory<Tile>(fp16_kernel)) return err;
      const cudaError_t err =
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&here, fp16_kernel, threads, Tile::smem_bytes());
      if (err != cudaSuccess) return static_cast<int>(err);
      here = here > 0 ? here : 1;
    }
    *wave = static_cast<long long>(*sms) * here;
    return 0;
  }
  // The chunks of a call (fa::split_chunks_one_cta_an_sm, or step 42's fa::split_chunks_by_efficiency where
  // ONE_CTA_AN_SM is false) for `pairs` CTAs' worth of rows.
  template <class Tile, bool ONE_CTA_AN_SM, class Kernel>
  static int plan_for(Kernel fp16_kernel, int threads, long long pairs, int capacity, fa::SplitPartials& p) {
    long long wave = 0;
    int sms = 0;
    if (int err = wave_for<Tile>(fp16_kernel, threads, &wave, &sms)) return err;
    if constexpr (ONE_CTA_AN_SM)
      fa::split_chunks_one_cta_an_sm(pairs, wave, sms, capacity, Tile::BC, p);
    else
      fa::split_chunks_by_efficiency(pairs, wave, capacity, Tile::BC, p);
    return 0;
  }
  template <int RT>
  static int plan(int B, int H_kv, int rows, int capacity, fa::SplitPartials& p) {
    using T = TmaTile<Elem, D, RT>;
    const long long pairs = static_cast<long long>(fa::ceil_div(rows, T::BR)) * H_kv * B;
    return plan_for<T, /*ONE_CTA_AN_SM=*/true>(decode_fwd<half, D, RT, PREFETCH_MAPS>, T::THREADS + 32, pairs,
                                               capacity, p);
  }
  // The row-warp call (rows > kRowWarpsAbove): as few CTAs a (sequence, K/V head) as hold its rows, up to MAX_WARPS
  // consumer warps each, the rows dealt evenly among them (71 rows: one CTA of 5 warps; 284: three of 6).
  static int row_blocks(int rows) { return fa::ceil_div(rows, RowWarpTile<Elem, D>::MAX_ROWS); }
  static int row_warps(int rows) { return fa::ceil_div(fa::ceil_div(rows, row_blocks(rows)), 16); }
  static int plan_row_warps(int B, int H_kv, int rows, int capacity, fa::SplitPartials& p) {
    using T = RowWarpTile<Elem, D>;
    const long long pairs = static_cast<long long>(row_blocks(rows)) * H_kv * B;
    return plan_for<T, /*ONE_CTA_AN_SM=*/false>(decode_fwd_row_warps<half, D, PREFETCH_MAPS>,
                                                32 * (row_warps(rows) + 1), pairs, capacity, p);
  }
  static constexpr int kRowWarpsAbove = 32;  // packed rows step 45's widest tile holds (RT = 2)
  // A wide call's plan (rows > kRowWarpsAbove): the 16-row tile's row blocks where the step's WideRule says so
  // (then p is its plan for them), else the row warps'.
  static int plan_wide(int B, int H_kv, int rows, int capacity, fa::SplitPartials& p, bool* row_blocks) {
    using T = TmaTile<Elem, D, 1>;
    long long wave = 0;
    int sms = 0;
    if (int err = wave_for<T>(decode_fwd<half, D, 1, PREFETCH_MAPS>, T::THREADS + 32, &wave, &sms)) return err;
    const long long pairs = static_cast<long long>(fa::ceil_div(rows, T::BR)) * H_kv * B;
    *row_blocks = WideRule::takes_row_blocks(pairs, wave, sms, capacity, T::BC, p);
    return *row_blocks ? 0 : plan_row_warps(B, H_kv, rows, capacity, p);
  }
  // Which kernel a call takes: the 16- or 32-row TMA tile, or the row warps.
  enum class Path { kTile16, kTile32, kRowWarps };
  // A call's kernel and its chunks. The launch and workspace_bytes both take this plan, so that the workspace a
  // caller sizes is the one the launch binds (a wide call's row blocks are planned by the step's WideRule, not by
  // the tile's own rule).
  static int plan_call(int B, int H_kv, int rows, int capacity, fa::SplitPartials& p, Path* path) {
    if (rows > kRowWarpsAbove) {
      bool row_blocks = false;
      const int err = plan_wide(B, H_kv, rows, capacity, p, &row_blocks);
      *path = row_blocks ? Path::kTile16 : Path::kRowWarps;
      return err;
    }
    *path = rows <= 16 ? Path::kTile16 : Path::kTile32;
    return rows <= 16 ? plan<1>(B, H_kv, rows, capacity, p) : plan<2>(B, H_kv, rows, capacity, p);
  }
  // The cache as (tokens, H_kv, D): B rows of S_max tokens, or the pages' tokens; a box of 64 keys, or of
  // a page where pages are shorter (a box never crosses a page).
  static int cache_maps(const fa::DecodeArgs& a, int BC, CUtensorMap* k_map, CUtensorMap* v_map, int* box_rows) {
    const long long tokens = static_cast<long long>(a.cache_dim0) * a.seq_tokens;
    *box_rows = a.block_table != nullptr && a.seq_tokens < BC ? a.seq_tokens : BC;
    CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
    if (int err = Promotion::choose(&promotion)) return err;
    if (int err = fa::tma::make_cache_map(k_map, static_cast<const Elem*>(a.k), tokens, a.H_kv, D, *box_rows, promotion))
      return err;
    return fa::tma::make_cache_map(v_map, static_cast<const Elem*>(a.v), tokens, a.H_kv, D, *box_rows, promotion);
  }
  template <int RT>
  static int launch(const fa::DecodeArgs& a, fa::SplitPartials p, void* workspace, long long bytes,
                    cudaStream_t stream) {
    using T = TmaTile<Elem, D, RT>;
    if (int err = fa::bind_workspace(a, p, D, workspace, bytes)) return err;
    if (int err = fa::opt_in_shared_memory<T>(decode_fwd<Elem, D, RT, PREFETCH_MAPS>)) return err;
    CUtensorMap k_map, v_map;
    int box_rows = 0;
    if (int err = cache_maps(a, T::BC, &k_map, &v_map, &box_rows)) return err;
    const dim3 grid(fa::ceil_div(a.rows, T::BR) * p.splits, a.H_kv, a.B);
    decode_fwd<Elem, D, RT, PREFETCH_MAPS>
        <<<grid, T::THREADS + 32, T::smem_bytes(), stream>>>(a, p, k_map, v_map, box_rows);
    if (int err = static_cast<int>(cudaGetLastError())) return err;
    return merge(a, p, stream);
  }
  static int launch_row_warps(const fa::DecodeArgs& a, fa::SplitPartials p, void* workspace, long long bytes,
                              cudaStream_t stream) {
    using T = RowWarpTile<Elem, D>;
    if (int err = fa::bind_workspace(a, p, D, workspace, bytes)) return err;
    if (int err = fa::opt_in_shared_memory<T>(decode_fwd_row_warps<Elem, D, PREFETCH_MAPS>)) return err;
    CUtensorMap k_map, v_map;
    int box_rows = 0;
    if (int err = cache_maps(a, T::BC, &k_map, &v_map, &box_rows)) return err;
    const dim3 grid(row_blocks(a.rows) * p.splits, a.H_kv, a.B);
    decode_fwd_row_warps<Elem, D, PREFETCH_MAPS>
        <<<grid, 32 * (row_warps(a.rows) + 1), T::smem_bytes(), stream>>>(a, p, k_map, v_map, box_rows);
    if (int err = static_cast<int>(cudaGetLastError())) return err;
    return merge(a, p, stream);
  }
  // The merge of a split call: its splits side by side where there are more than kSideBySideFrom, else
  // step 46's walk (fewer round trips than one CTA a row costs).
  static constexpr int kSideBySideFrom = 8;
  static int merge(const fa::DecodeArgs& a, const fa::SplitPartials& p, cudaStream_t stream) {
    return p.splits > kSideBySideFrom ? fa::launch_merge_side_by_side<Elem, D>(a, p, stream)
                                      : fa::launch_combine_early<Elem, D>(a, p, stream);
  }
  static int run(const fa::DecodeArgs& a, void* workspace, long long bytes, cudaStream_t stream) {
    fa::SplitPartials p{};
    Path path = Path::kTile16;
    if (int err = plan_call(a.B, a.H_kv, a.rows, fa::decode_capacity(a), p, &path)) return err;
    switch (path) {
      case Path::kTile16: return launch<1>(a, p, workspace, bytes, stream);
      case Path::kTile32: return launch<2>(a, p, workspace, bytes, stream);
      default: return launch_row_warps(a, p, workspace, bytes, stream);
    }
  }
  static long long workspace_bytes(int B, int q_len, int H, int H_kv, int capacity) {
    if (B < 1 || q_len < 1 || H_kv < 1 || H % H_kv || capacity < 1) return -1;
    const int rows = q_len * (H / H_kv);
    fa::SplitPartials p{};
    Path path = Path::kTile16;
    if (plan_call(B, H_kv, rows, capacity, p, &path)) return -1;
    return fa::workspace_bytes_for(p, B, q_len, H, D);
  }
};

template <int D>
using WidestTile = TmaTile<half, D, 2>;

}  // namespace
