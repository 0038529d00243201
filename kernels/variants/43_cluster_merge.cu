// Step 43 - +merge the chunks in a cluster: where a call splits the keys into at most 8 chunks (a
// portable cluster), the chunks of one (sequence, K/V head) are one thread-block cluster; each CTA keeps
// its chunk's result in its own shared memory, and after a cluster barrier every CTA merges a share of
// the rows' columns by reading the others through distributed shared memory (fa/decode_cluster.cuh). No
// partial results go to global memory and no second kernel runs. More chunks merge as before.
// Hypothesis: at batch 8 of Llama-3-8B's heads step 42's merge kernel takes 4.8 us of 72.7 (Nsight
// Compute, H200: 32 CTAs, each thread's loads over the splits one after another; cuDNN's takes 3.4), and
// the main kernel writes and the merge rereads 0.5 MB of partial results; in the cluster the merge is a
// few hundred bytes a row over the SM-to-SM network while the CTAs are still resident.
// Predicted: 1.04-1.12x over step 42 where a call splits into 2-8 chunks; within noise elsewhere.
#include "fa/decode.cuh"
#include "fa/decode_cluster.cuh"
#include "fa/decode_tma.cuh"
#include "fa/wgmma_attention.cuh"  // fa::wgmma::fence_proxy_async

namespace {

template <class Elem, int D, int RT>
using TmaTile = fa::DecodeTmaTile<Elem, D, RT>;  // fa/decode_tma.cuh, with produce_boxes and zero_rows_past

// The consumers' part of a CTA (step 42's loop and warp merge): the chunk's keys for the CTA's rows, its
// result written for the merge kernel, or kept for the cluster.
template <class T, class Layout>
__device__ __forceinline__ void attend_chunk(typename T::Elem* sq, typename T::Elem* sk, typename T::Elem* sv,
                                             fa::KvRing<T::STAGES>& ring, const fa::ChunkResult<T>& keep,
                                             const fa::DecodeArgs& a, const fa::SplitPartials& p, int b, int kv,
                                             int row0, int rows_here, int split, int n, int key_begin, int key_end,
                                             int tiles, bool in_cluster) {
  constexpr int RT = T::RT, D = T::D;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
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
  if (in_cluster) fa::decode_keep_chunk<T>(red, keep, rows_here, tid);
  else fa::decode_write_rows<T>(red, a, p, b, kv, row0, split, tid);
}


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
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  // A cluster's CTAs are consecutive in x: the chunks of one row block side by side, rank = chunk.
  const int split = blockIdx.x % p.splits, row0 = (blockIdx.x / p.splits) * T::BR;
  const int kv = blockIdx.y, b = blockIdx.z;
  const int n = a.cache_lens[b];
  const bool in_cluster = fa::merges_in_cluster(p);
  const int key_begin = split * p.chunk;
  // A chunk past a shorter sequence's end: outside a cluster the merge skips it; inside, the CTA keeps
  // an empty result (max -inf) and takes part in the cluster's barriers.
  if (key_begin >= n && !in_cluster) return;
  const int key_end = max(key_begin, min(key_begin + p.chunk, n));
  const int tiles = fa::ceil_div(key_end - key_begin, T::BC);
  const int rows_here = min(T::BR, a.rows - row0);
  ring.init(/*producer arrivals=*/1, /*consumer arrivals=*/T::THREADS);
  if (tid == 0) fa::tma::fence_barrier_init();
  __syncthreads();
  // The chunk's result, kept for the cluster after the warps' merge buffer (both in the stages).
  const fa::ChunkResult<T> keep{reinterpret_cast<float*>(sk) + T::MERGE_BYTES / sizeof(float)};
  static_assert(T::MERGE_BYTES + fa::ChunkResult<T>::BYTES <= T::STAGE_BYTES, "the chunk's result must fit");
  if (warp == T::WARPS) {  // the producer: outside a cluster it leaves once its copies are issued
    if (lane == 0) fa::produce_boxes<T>(ring, sk, sv, &k_map, &v_map, a, b, kv, key_begin, key_end, tiles, box_rows);
    if (!in_cluster) return;
  } else {
    attend_chunk<T, Layout>(sq, sk, sv, ring, keep, a, p, b, kv, row0, rows_here, split, n, key_begin, key_end, tiles,
                            in_cluster);
  }
  if (!in_cluster) return;
  namespace cg = cooperative_groups;
  cg::this_cluster().sync();  // every CTA's result is kept
  fa::decode_merge_cluster<T>(keep, a, b, kv, row0, rows_here, p.splits, split, tid, T::THREADS + 32);
  cg::this_cluster().sync();  // no CTA leaves while another reads its result
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
    const bool in_cluster = fa::merges_in_cluster(p);
    if (!in_cluster)
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
    if (!in_cluster) {
      decode_fwd<Elem, D, RT><<<grid, T::THREADS + 32, T::smem_bytes(), stream>>>(a, p, k_map, v_map, box_rows);
      fa::launch_combine<Elem, D>(a, p, stream);
      return static_cast<int>(cudaGetLastError());
    }
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = static_cast<unsigned>(p.splits);
    cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = dim3(T::THREADS + 32);
    config.dynamicSmemBytes = T::smem_bytes();
    config.stream = stream;
    config.attrs = &cluster;
    config.numAttrs = 1;
    return static_cast<int>(cudaLaunchKernelEx(&config, decode_fwd<Elem, D, RT>, a, p, k_map, v_map, box_rows));
  }
  static int run(const fa::DecodeArgs& a, void* workspace, long long bytes, cudaStream_t stream) {
    return a.rows <= 16 ? launch<1>(a, workspace, bytes, stream) : launch<2>(a, workspace, bytes, stream);
  }
  static long long workspace_bytes(int B, int q_len, int H, int H_kv, int capacity) {
    if (B < 1 || q_len < 1 || H_kv < 1 || H % H_kv || capacity < 1) return -1;
    const int rows = q_len * (H / H_kv);
    fa::SplitPartials p{};
    if (rows <= 16 ? plan<1>(B, H_kv, rows, capacity, p) : plan<2>(B, H_kv, rows, capacity, p)) return -1;
    return fa::merges_in_cluster(p) ? 0 : fa::workspace_bytes_for(p, B, q_len, H, D);
  }
};

template <int D>
using WidestTile = TmaTile<half, D, 2>;

}  // namespace

FA_EXPORT_DECODE_VARIANT(LaunchDecode, WidestTile)
