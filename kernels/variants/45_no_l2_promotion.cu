// Step 45 - +no L2 promotion: the cache's tensor maps ask L2 for what a box reads, 128 bytes a row, instead
// of promoting each request to 256 bytes (fa::tma::make_cache_map's promotion).
// Hypothesis: at D = 128 a token row of a K/V head is two 64-column boxes; with 256-byte promotion the
// first box's request brings the second's line into L2 and the second box's request hits it, so every
// byte crosses L2 twice: Nsight Compute at batch 8 of Llama-3-8B's heads (H200) shows step 44 with a 25 %
// L2 hit rate and 537 MB of L2 traffic for 268 MB read from DRAM, at 88 % of L2 throughput, where cuDNN
// has 1 % and 405 MB, and reads DRAM at 85.9 % of peak against 81.7 %.
// Predicted: 1.02-1.05x over step 44 where the cache streams from HBM (L2 traffic down).
#include "fa/decode_tma_kernel.cuh"

#ifndef FA_DECODE_L2_PROMOTION
#define FA_DECODE_L2_PROMOTION CU_TENSOR_MAP_L2_PROMOTION_NONE  // a knob for explorations (-D), not a switch
#endif

namespace {

template <class Elem, int D>
struct LaunchDecode {
  // The chunks of a call (fa::split_chunks_by_efficiency), from the SMs and this kernel's CTAs an SM.
  template <int RT>
  static int plan(int B, int H_kv, int rows, int capacity, fa::SplitPartials& p) {
    using T = TmaTile<Elem, D, RT>;
    // CTAs an SM, from the occupancy calculator once (internal linkage: per library), of the fp16
    // kernel for both element types, so that workspace_bytes (which has no type) plans alike.
    static int per_sm = 0;
    int sms = 0;
    if (int err = fa::multiprocessor_count(&sms)) return err;
    if (per_sm == 0) {
      if (int err = fa::opt_in_shared_memory<T>(decode_fwd<half, D, RT>)) return err;
      const cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, decode_fwd<half, D, RT>,
                                                                            T::THREADS + 32, T::smem_bytes());
      if (err != cudaSuccess) return static_cast<int>(err);
      per_sm = per_sm > 0 ? per_sm : 1;
    }
    const long long pairs = static_cast<long long>(fa::ceil_div(rows, T::BR)) * H_kv * B;
    fa::split_chunks_by_efficiency(pairs, static_cast<long long>(sms) * per_sm, capacity, T::BC, p);
    return 0;
  }
  template <int RT>
  static int launch(const fa::DecodeArgs& a, void* workspace, long long bytes, cudaStream_t stream) {
    using T = TmaTile<Elem, D, RT>;
    fa::SplitPartials p{};
    if (int err = plan<RT>(a.B, a.H_kv, a.rows, fa::decode_capacity(a), p)) return err;
    if (int err = fa::bind_workspace(a, p, D, workspace, bytes)) return err;
    if (int err = fa::opt_in_shared_memory<T>(decode_fwd<Elem, D, RT>)) return err;
    // The cache as (tokens, H_kv, D): B rows of S_max tokens, or the pages' tokens; a box of 64 keys,
    // or of a page where pages are shorter (a box never crosses a page).
    const long long tokens = static_cast<long long>(a.cache_dim0) * a.seq_tokens;
    const int box_rows = a.block_table != nullptr && a.seq_tokens < T::BC ? a.seq_tokens : T::BC;
    CUtensorMap k_map, v_map;
    constexpr auto promotion = FA_DECODE_L2_PROMOTION;
    if (int err = fa::tma::make_cache_map(&k_map, static_cast<const Elem*>(a.k), tokens, a.H_kv, D, box_rows, promotion))
      return err;
    if (int err = fa::tma::make_cache_map(&v_map, static_cast<const Elem*>(a.v), tokens, a.H_kv, D, box_rows, promotion))
      return err;
    const dim3 grid(fa::ceil_div(a.rows, T::BR) * p.splits, a.H_kv, a.B);
    decode_fwd<Elem, D, RT><<<grid, T::THREADS + 32, T::smem_bytes(), stream>>>(a, p, k_map, v_map, box_rows);
    if (int err = static_cast<int>(cudaGetLastError())) return err;
    return fa::launch_combine_early<Elem, D>(a, p, stream);
  }
  static int run(const fa::DecodeArgs& a, void* workspace, long long bytes, cudaStream_t stream) {
    return a.rows <= 16 ? launch<1>(a, workspace, bytes, stream) : launch<2>(a, workspace, bytes, stream);
  }
  static long long workspace_bytes(int B, int q_len, int H, int H_kv, int capacity) {
    if (B < 1 || q_len < 1 || H_kv < 1 || H % H_kv || capacity < 1) return -1;
    const int rows = q_len * (H / H_kv);
    fa::SplitPartials p{};
    if (rows <= 16 ? plan<1>(B, H_kv, rows, capacity, p) : plan<2>(B, H_kv, rows, capacity, p)) return -1;
    return fa::workspace_bytes_for(p, B, q_len, H, D);
  }
};

template <int D>
using WidestTile = TmaTile<half, D, 2>;

}  // namespace

FA_EXPORT_DECODE_VARIANT(LaunchDecode, WidestTile)
