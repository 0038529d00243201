// Step 44 - +launch the merge early: the merge kernel of a split call is launched as the main kernel's
// programmatic dependent (cudaLaunchAttributeProgrammaticStreamSerialization, fa::launch_combine_early):
// every CTA of the main kernel signals at its start (griddepcontrol.launch_dependents), so the merge's
// CTAs are scheduled while the last wave streams, and each waits on the device (griddepcontrol.wait)
// for the main kernel's writes instead of the stream ordering the two launches.
// Hypothesis: a split call pays the gap between its two kernels and the merge's start-up after the
// main kernel's end: step 42's call takes 70.3 us at batch 8 of Llama-3-8B's heads where its main kernel
// alone takes 67.9 (Nsight Compute); cuDNN's call takes 66.8 where its main kernel takes 66.0.
// Predicted: 1.02-1.05x over step 42 where a call splits; within noise where it does not.
#include "fa/decode_tma_kernel.cuh"

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
    if (int err = fa::tma::make_cache_map(&k_map, static_cast<const Elem*>(a.k), tokens, a.H_kv, D, box_rows)) return err;
    if (int err = fa::tma::make_cache_map(&v_map, static_cast<const Elem*>(a.v), tokens, a.H_kv, D, box_rows)) return err;
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
