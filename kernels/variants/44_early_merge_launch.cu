// Step 44 - +launch the merge early: the merge kernel of a split call is launched as the main kernel's
// programmatic dependent (cudaLaunchAttributeProgrammaticStreamSerialization, fa::launch_combine_early):
// every CTA of the main kernel signals at its start (griddepcontrol.launch_dependents), so the merge's
// CTAs are scheduled while the last wave streams, and each waits on the device (griddepcontrol.wait)
// for the main kernel's writes instead of the stream ordering the two launches.
// Hypothesis: a split call pays the gap between its two kernels and the merge's start-up after the
// main kernel's end: step 42's call takes 70.3 us at batch 8 of Llama-3-8B's heads where its main kernel
// alone takes 67.9 (Nsight Compute); cuDNN's call takes 66.8 where its main kernel takes 66.0.
// Predicted: 1.02-1.05x over step 42 where a call splits; within noise where it does not.
#include "fa/decode.cuh"
#include "fa/decode_tma.cuh"
#include "fa/wgmma_attention.cuh"  // fa::wgmma::fence_proxy_async

namespace {

template <class Elem, int D, int RT>
using TmaTile = fa::DecodeTmaTile<Elem, D, RT>;  // fa/decode_tma.cuh, with produce_boxes and zero_rows_past

template <class Elem, int D, int RT>
__global__ void __launch_bounds__(fa::DecodeTile<Elem, D, RT>::THREADS + 32, 1)
    decode_fwd(const fa::DecodeArgs a, const fa::SplitPartials p, const __grid_constant__ CUtensorMap k_map,
               const __grid_constant__ CUtensorMap v_map, const int box_rows) {
  using T = TmaTile<Elem, D, RT>;
  using Layout = fa::Swizzled128<T>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];  // the swizzle repeats every 1024 bytes
  __shared__ fa::KvRing<T::STAGES> ring;
  Elem* sk = reinterpret_cast<Elem*>(smem_raw);  // the stages first: each 1024-byte aligned
  Elem* sv = sk + T::STAGES * T::KV_ELEMS;
  Elem* sq = sv + T::STAGES * T::KV_ELEMS;
  // The merge kernel may be scheduled once every CTA has started (it waits for this grid's end itself).
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int row_blocks = fa::ceil_div(a.rows, T::BR);
  const int row0 = (blockIdx.x % row_blocks) * T::BR, split = blockIdx.x / row_blocks;
  const int kv = blockIdx.y, b = blockIdx.z;
  const int n = a.cache_lens[b];
  const int key_begin = split * p.chunk;
  if (key_begin >= n) return;  // a chunk past a shorter sequence's end: the merge skips it
  const int key_end = min(key_begin + p.chunk, n);
  const int tiles = fa::ceil_div(key_end - key_begin, T::BC);
  ring.init(/*producer arrivals=*/1, /*consumer arrivals=*/T::THREADS);
  if (tid == 0) fa::tma::fence_barrier_init();
  __syncthreads();
  if (warp == T::WARPS) {  // the producer leaves once its copies are issued; they complete without it
    if (lane == 0) fa::produce_boxes<T>(ring, sk, sv, &k_map, &v_map, a, b, kv, key_begin, key_end, tiles, box_rows);
    return;
  }

  fa::decode_load_q<T>(sq, a, b, kv, row0, tid);
  int limit[RT][2];
  fa::decode_row_limits<T>(limit, a, n, row0, key_end, lane);
  const float scale_log2 = a.scale * 1.4426950408889634f;
  float o[RT][D / 8][4] = {};
  fa::RowState rows[RT][2];
  fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);  // Q is in shared memory
  for (int tile = 0; tile < tiles; ++tile) {
    const int st = ring.stage(tile);
    fa::mbarrier_wait(&ring.full[st], ring.parity(tile));
    const int off = st * T::KV_ELEMS + Layout::warp_rows(warp * T::WARP_KEYS);
    const int key0 = key_begin + tile * T::BC + warp * T::WARP_KEYS;
    const bool past_end = key0 + T::WARP_KEYS > key_end;
    if (past_end) fa::zero_rows_past<T, Layout>(sv + off, key0, key_end, lane);
    fa::decode_warp_keys<T, Layout>(o, rows, sq, sk + off, sv + off, key0, limit, scale_log2, lane);
    if (past_end) fa::wgmma::fence_proxy_async();  // the zeros before the copy engine's next writes to the stage
    fa::mbarrier_arrive(&ring.empty[st]);  // each thread releases its own reads of the stage
  }
  fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);  // every consumer is past its last tile

  // The stages become the merge buffer (every copy landed: each full barrier was waited on).
  static_assert(T::MERGE_BYTES <= T::STAGE_BYTES, "the merge buffer must fit in the stages");
  auto* red = reinterpret_cast<float*>(sk);
  fa::decode_merge_warps<T, /*CONSUMERS_ONLY=*/true>(red, o, rows, warp, lane);
  fa::decode_write_rows<T>(red, a, p, b, kv, row0, split, tid);
}

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
