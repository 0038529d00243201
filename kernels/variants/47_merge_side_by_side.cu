// Step 47 - +splits merged side by side: where a call splits its keys into more than 8 chunks, the merge
// reads a row's splits in parallel (one CTA an output row, its slots of D / 4 threads each taking every
// slots-th split, their loads in flight together; fa::decode_merge_splits_side_by_side) instead of one
// thread walking all splits for 8 columns.
// Hypothesis: step 46's merge is a latency chain of one L2 round trip a split: Nsight Compute (H200) has
// it at 14.4 us for the 29 splits of batch 1 at 128k tokens (4 CTAs), where cuDNN's reduction takes 4.0;
// the early launch hides only the part that overlaps the main kernel's last wave. With few splits the
// walk is short and one CTA a row costs more than it saves (exploration 2026-11-28-decode-row-warps,
// call 2: 13.9 -> 19.3 us at Falcon-7B's 2 splits a sequence), so those calls keep step 46's merge.
// Predicted: 1.03-1.08x over step 46 at the shapes that split into more than 8 chunks (batch 1 at 128k
// tokens, batch 8 of Falcon-7B's heads), unchanged elsewhere.
#include "fa/decode.cuh"
#include "fa/decode_tma.cuh"
#include "fa/wgmma_attention.cuh"  // fa::wgmma::fence_proxy_async

#ifndef FA_DECODE_L2_PROMOTION
#define FA_DECODE_L2_PROMOTION CU_TENSOR_MAP_L2_PROMOTION_NONE  // a knob for explorations (-D), not a switch
#endif

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

// The row-warp tile: step 45's stages and producer, Q for up to MAX_WARPS consumer warps of 16 rows.
template <class Elem, int D>
struct RowWarpTile : TmaTile<Elem, D, 1> {
  using Base = TmaTile<Elem, D, 1>;
  static constexpr int MAX_WARPS = 6;
  static constexpr int MAX_ROWS = 16 * MAX_WARPS;
  static constexpr size_t smem_bytes() { return Base::STAGE_BYTES + MAX_ROWS * Base::LD * sizeof(Elem); }
};

// A CTA of blockDim.x / 32 - 1 consumer warps (16 packed rows each, the CTA's rows 16 x that) and one
// producer warp; the rows' results leave from registers (no merge of warps).
template <class Elem, int D>
__global__ void __launch_bounds__(32 * (RowWarpTile<Elem, D>::MAX_WARPS + 1), 1)
    decode_fwd_row_warps(const fa::DecodeArgs a, const fa::SplitPartials p, const __grid_constant__ CUtensorMap k_map,
                         const __grid_constant__ CUtensorMap v_map, const int box_rows) {
  using T = RowWarpTile<Elem, D>;
  using Layout = fa::Swizzled128<T>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ fa::KvRing<T::STAGES> ring;
  Elem* sk = reinterpret_cast<Elem*>(smem_raw);
  Elem* sv = sk + T::STAGES * T::KV_ELEMS;
  Elem* sq = sv + T::STAGES * T::KV_ELEMS;
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  const int consumers = blockDim.x / 32 - 1, consumer_threads = 32 * consumers;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int row_blocks = fa::ceil_div(a.rows, 16 * consumers);
  const int row0 = (blockIdx.x % row_blocks) * 16 * consumers, split = blockIdx.x / row_blocks;
  const int kv = blockIdx.y, b = blockIdx.z;
  const int n = a.cache_lens[b];
  const int key_begin = split * p.chunk;
  if (key_begin >= n) return;  // a chunk past a shorter sequence's end: the merge skips it
  const int key_end = min(key_begin + p.chunk, n);
  const int tiles = fa::ceil_div(key_end - key_begin, T::BC);
  ring.init(/*producer arrivals=*/1, /*consumer arrivals=*/consumer_threads);
  if (tid == 0) fa::tma::fence_barrier_init();
  __syncthreads();
  if (warp == consumers) {
    if (lane == 0) fa::produce_boxes<T>(ring, sk, sv, &k_map, &v_map, a, b, kv, key_begin, key_end, tiles, box_rows);
    return;
  }

  // The warp's 16 rows of Q into its own slice of shared memory.
  const int wrow0 = row0 + 16 * warp;
  Elem* sq_w = sq + warp * 16 * T::LD;
  fa::decode_load_q<T, /*ROWS=*/16, /*THREADS=*/32>(sq_w, a, b, kv, wrow0, lane);
  __syncwarp();
  int limit[1][2];
  fa::decode_row_limits<T>(limit, a, n, wrow0, key_end, lane);
  const float scale_log2 = a.scale * 1.4426950408889634f;
  float o[D / 8][4] = {};
  fa::RowState rows[2];
  for (int tile = 0; tile < tiles; ++tile) {
    const int st = ring.stage(tile);
    fa::mbarrier_wait(&ring.full[st], ring.parity(tile));
    const int key0 = key_begin + tile * T::BC;
    const bool past_end = key0 + T::BC > key_end;
    if (past_end) {  // every warp reads every row of V: its rows past the end zeroed once, by all consumers
      for (int c = tid; c < T::BC * (D / 8); c += consumer_threads) {
        const int r = c / (D / 8), col = (c % (D / 8)) * 8;
        if (key0 + r >= key_end)
          *reinterpret_cast<uint4*>(sv + st * T::KV_ELEMS + Layout::at(r, col)) = make_uint4(0, 0, 0, 0);
      }
      fa::named_barrier_sync(fa::kBarrierConsumers, consumer_threads);
    }
    fa::decode_row_warp_keys<T, Layout>(o, rows, sq_w, sk + st * T::KV_ELEMS, sv + st * T::KV_ELEMS, key0, limit[0],
                                        scale_log2, lane);
    if (past_end) fa::wgmma::fence_proxy_async();  // the zeros before the copy engine's next writes to the stage
    fa::mbarrier_arrive(&ring.empty[st]);
  }

  // Rows g and g + 8 of the warp: O over the sum into the output (one chunk), else the chunk's partial.
  const int g = lane / 4, tq = lane % 4;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = wrow0 + g + 8 * h;
    const float l = fa::group_sum<4>(rows[h].l);
    if (r >= a.rows) continue;
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;  // a row may see no key of a chunk (decode_write_rows)
    if (p.splits == 1) {
      Elem* dst = static_cast<Elem*>(a.o) + fa::query_offset<D>(a, b, kv, r) + 2 * tq;
#pragma unroll
      for (int c = 0; c < D / 8; ++c)
        *reinterpret_cast<unsigned*>(dst + 8 * c) = fa::pack2<Elem>(o[c][2 * h] * inv, o[c][2 * h + 1] * inv);
      continue;
    }
    const size_t at = fa::split_row(a, split, b, kv, r);
    float* dst = p.o + at * D + 2 * tq;
#pragma unroll
    for (int c = 0; c < D / 8; ++c)
      *reinterpret_cast<float2*>(dst + 8 * c) = make_float2(o[c][2 * h] * inv, o[c][2 * h + 1] * inv);
    if (tq == 0) p.lse[at] = rows[h].m + __log2f(l);
  }
}

template <class Elem, int D>
struct LaunchDecode {
  // The chunks of a call (fa::split_chunks_by_efficiency) for `pairs` CTAs' worth of rows, from the SMs
  // and the kernel's CTAs an SM at `threads` a CTA: the occupancy calculator's, once a kernel and CTA size
  // (internal linkage: per library), of the fp16 kernel for both element types, so that workspace_bytes
  // (which has no type) plans alike.
  template <class Tile, class Kernel>
  static int plan_for(Kernel fp16_kernel, int threads, long long pairs, int capacity, fa::SplitPartials& p) {
    static int per_sm[33] = {};  // by warps a CTA
    int& here = per_sm[threads / 32];
    int sms = 0;
    if (int err = fa::multiprocessor_count(&sms)) return err;
    if (here == 0) {
      if (int err = fa::opt_in_shared_memory<Tile>(fp16_kernel)) return err;
      const cudaError_t err =
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&here, fp16_kernel, threads, Tile::smem_bytes());
      if (err != cudaSuccess) return static_cast<int>(err);
      here = here > 0 ? here : 1;
    }
    fa::split_chunks_by_efficiency(pairs, static_cast<long long>(sms) * here, capacity, Tile::BC, p);
    return 0;
  }
  template <int RT>
  static int plan(int B, int H_kv, int rows, int capacity, fa::SplitPartials& p) {
    using T = TmaTile<Elem, D, RT>;
    const long long pairs = static_cast<long long>(fa::ceil_div(rows, T::BR)) * H_kv * B;
    return plan_for<T>(decode_fwd<half, D, RT>, T::THREADS + 32, pairs, capacity, p);
  }
  // The row-warp call (rows > kRowWarpsAbove): as few CTAs a (sequence, K/V head) as hold its rows, up to MAX_WARPS
  // consumer warps each, the rows dealt evenly among them (71 rows: one CTA of 5 warps; 284: three of 6).
  static int row_blocks(int rows) { return fa::ceil_div(rows, RowWarpTile<Elem, D>::MAX_ROWS); }
  static int row_warps(int rows) { return fa::ceil_div(fa::ceil_div(rows, row_blocks(rows)), 16); }
  static int plan_row_warps(int B, int H_kv, int rows, int capacity, fa::SplitPartials& p) {
    using T = RowWarpTile<Elem, D>;
    const long long pairs = static_cast<long long>(row_blocks(rows)) * H_kv * B;
    return plan_for<T>(decode_fwd_row_warps<half, D>, 32 * (row_warps(rows) + 1), pairs, capacity, p);
  }
  static constexpr int kRowWarpsAbove = 32;  // packed rows step 45's widest tile holds (RT = 2)
  static int plan_any(int B, int H_kv, int rows, int capacity, fa::SplitPartials& p) {
    if (rows > kRowWarpsAbove) return plan_row_warps(B, H_kv, rows, capacity, p);
    return rows <= 16 ? plan<1>(B, H_kv, rows, capacity, p) : plan<2>(B, H_kv, rows, capacity, p);
  }
  // The cache as (tokens, H_kv, D): B rows of S_max tokens, or the pages' tokens; a box of 64 keys, or of
  // a page where pages are shorter (a box never crosses a page).
  static int cache_maps(const fa::DecodeArgs& a, int BC, CUtensorMap* k_map, CUtensorMap* v_map, int* box_rows) {
    const long long tokens = static_cast<long long>(a.cache_dim0) * a.seq_tokens;
    *box_rows = a.block_table != nullptr && a.seq_tokens < BC ? a.seq_tokens : BC;
    constexpr auto promotion = FA_DECODE_L2_PROMOTION;
    if (int err = fa::tma::make_cache_map(k_map, static_cast<const Elem*>(a.k), tokens, a.H_kv, D, *box_rows, promotion))
      return err;
    return fa::tma::make_cache_map(v_map, static_cast<const Elem*>(a.v), tokens, a.H_kv, D, *box_rows, promotion);
  }
  template <int RT>
  static int launch(const fa::DecodeArgs& a, void* workspace, long long bytes, cudaStream_t stream) {
    using T = TmaTile<Elem, D, RT>;
    fa::SplitPartials p{};
    if (int err = plan<RT>(a.B, a.H_kv, a.rows, fa::decode_capacity(a), p)) return err;
    if (int err = fa::bind_workspace(a, p, D, workspace, bytes)) return err;
    if (int err = fa::opt_in_shared_memory<T>(decode_fwd<Elem, D, RT>)) return err;
    CUtensorMap k_map, v_map;
    int box_rows = 0;
    if (int err = cache_maps(a, T::BC, &k_map, &v_map, &box_rows)) return err;
    const dim3 grid(fa::ceil_div(a.rows, T::BR) * p.splits, a.H_kv, a.B);
    decode_fwd<Elem, D, RT><<<grid, T::THREADS + 32, T::smem_bytes(), stream>>>(a, p, k_map, v_map, box_rows);
    if (int err = static_cast<int>(cudaGetLastError())) return err;
    return merge(a, p, stream);
  }
  static int launch_row_warps(const fa::DecodeArgs& a, void* workspace, long long bytes, cudaStream_t stream) {
    using T = RowWarpTile<Elem, D>;
    fa::SplitPartials p{};
    if (int err = plan_row_warps(a.B, a.H_kv, a.rows, fa::decode_capacity(a), p)) return err;
    if (int err = fa::bind_workspace(a, p, D, workspace, bytes)) return err;
    if (int err = fa::opt_in_shared_memory<T>(decode_fwd_row_warps<Elem, D>)) return err;
    CUtensorMap k_map, v_map;
    int box_rows = 0;
    if (int err = cache_maps(a, T::BC, &k_map, &v_map, &box_rows)) return err;
    const dim3 grid(row_blocks(a.rows) * p.splits, a.H_kv, a.B);
    decode_fwd_row_warps<Elem, D>
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
    if (a.rows > kRowWarpsAbove) return launch_row_warps(a, workspace, bytes, stream);
    return a.rows <= 16 ? launch<1>(a, workspace, bytes, stream) : launch<2>(a, workspace, bytes, stream);
  }
  static long long workspace_bytes(int B, int q_len, int H, int H_kv, int capacity) {
    if (B < 1 || q_len < 1 || H_kv < 1 || H % H_kv || capacity < 1) return -1;
    const int rows = q_len * (H / H_kv);
    fa::SplitPartials p{};
    if (plan_any(B, H_kv, rows, capacity, p)) return -1;
    return fa::workspace_bytes_for(p, B, q_len, H, D);
  }
};

template <int D>
using WidestTile = TmaTile<half, D, 2>;

}  // namespace

FA_EXPORT_DECODE_VARIANT(LaunchDecode, WidestTile)
