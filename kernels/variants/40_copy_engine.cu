// Step 40 - +copy engine for K/V (sm_90a): a producer warp hands each token's K and V rows to the
// copy engine (cp.async.bulk, one instruction a row, completion counted on the stage's full
// mbarrier) and the 4 consumer warps release a stage through its empty mbarrier, so the CTA's
// __syncthreads per tile and every consumer thread's 16 cp.async and address computations a tile
// are gone: the consumers wait only for the data they read, and only the producer computes
// addresses (a page lookup per row where paged, as before). Rows past a chunk's end copy its last
// key again (finite data, masked), since a bulk copy cannot zero-fill. Forks from step 38: step 39's
// grid order did not help.
// Hypothesis: step 38 reaches 0.73 of the copy bandwidth with every SM busy at batch 8 of
// Llama-3-8B (ncu: 67.8 % of peak DRAM throughput, 8 warps an SM issuing one instruction in 6.3
// cycles); its tile loop is latency-bound around a block-wide barrier, so a tile's copies are
// issued only once the slowest warp is done with the stage. With the hand-off per stage the ring
// stays full and DRAM throughput rises toward cuDNN's (0.95 of the copy).
// Predicted: 1.05-1.25x where the keys are split (DRAM throughput up), 1.0-1.1x elsewhere.
#include "fa/decode.cuh"
#include "fa/decode_tma.cuh"

namespace {


// The producer warp: every row of every tile of the chunk, into the stage the ring gives it.
template <class T>
__device__ __forceinline__ void produce_rows(fa::KvRing<T::STAGES>& ring, typename T::Elem* sk,
                                             typename T::Elem* sv, const fa::DecodeArgs& a, int b, int kv,
                                             int key_begin, int key_end, int tiles, int lane) {
  using Elem = typename T::Elem;
  const auto* k = static_cast<const Elem*>(a.k);
  const auto* v = static_cast<const Elem*>(a.v);
  constexpr unsigned ROW_BYTES = T::D * sizeof(Elem);
  for (int tile = 0; tile < tiles; ++tile) {
    const int st = ring.stage(tile);
    if (tile >= T::STAGES) fa::mbarrier_wait(&ring.empty[st], ring.parity(tile - T::STAGES));
    if (lane == 0) fa::tma::arrive_expect_bytes(&ring.full[st], 2 * T::BC * ROW_BYTES);
    __syncwarp();
    const int key0 = key_begin + tile * T::BC;
    for (int r = lane; r < T::BC; r += 32) {
      const size_t off = fa::cache_offset<T::D>(a, b, min(key0 + r, key_end - 1), kv);
      fa::tma::load_bytes(sk + st * T::KV_ELEMS + r * T::LD, k + off, ROW_BYTES, &ring.full[st]);
      fa::tma::load_bytes(sv + st * T::KV_ELEMS + r * T::LD, v + off, ROW_BYTES, &ring.full[st]);
    }
  }
}

template <class Elem, int D, int RT>
__global__ void __launch_bounds__(fa::DecodeTile<Elem, D, RT>::THREADS + 32, 1)
    decode_fwd(const fa::DecodeArgs a, const fa::SplitPartials p) {
  using T = fa::DecodeTile<Elem, D, RT>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __shared__ fa::KvRing<T::STAGES> ring;
  Elem* sq = reinterpret_cast<Elem*>(smem_raw);
  Elem* sk = sq + T::Q_ELEMS;
  Elem* sv = sk + T::STAGES * T::KV_ELEMS;
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
    produce_rows<T>(ring, sk, sv, a, b, kv, key_begin, key_end, tiles, lane);
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
    const int off = st * T::KV_ELEMS + warp * T::WARP_KEYS * T::LD;
    fa::decode_warp_keys<T>(o, rows, sq, sk + off, sv + off, key_begin + tile * T::BC + warp * T::WARP_KEYS, limit,
                            scale_log2, lane);
    fa::mbarrier_arrive(&ring.empty[st]);  // each thread releases its own reads of the stage
  }
  fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);  // every consumer is past its last tile

  // The stages become the merge buffer (every copy landed: each full barrier was waited on).
  auto* red = reinterpret_cast<float*>(sk);
  fa::decode_merge_warps<T, /*CONSUMERS_ONLY=*/true>(red, o, rows, warp, lane);
  fa::decode_write_rows<T>(red, a, p, b, kv, row0, split, tid);
}

template <class Elem, int D>
struct LaunchDecode {
  // The chunks of a call (fa::split_chunks), from the SMs and this kernel's CTAs an SM.
  template <int RT>
  static int plan(int B, int H_kv, int rows, int capacity, fa::SplitPartials& p) {
    using T = fa::DecodeTile<Elem, D, RT>;
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
    fa::split_chunks(pairs, static_cast<long long>(sms) * per_sm, capacity, T::BC, p);
    return 0;
  }
  template <int RT>
  static int launch(const fa::DecodeArgs& a, void* workspace, long long bytes, cudaStream_t stream) {
    using T = fa::DecodeTile<Elem, D, RT>;
    fa::SplitPartials p{};
    if (int err = plan<RT>(a.B, a.H_kv, a.rows, fa::decode_capacity(a), p)) return err;
    if (int err = fa::bind_workspace(a, p, D, workspace, bytes)) return err;
    if (int err = fa::opt_in_shared_memory<T>(decode_fwd<Elem, D, RT>)) return err;
    const dim3 grid(fa::ceil_div(a.rows, T::BR) * p.splits, a.H_kv, a.B);
    decode_fwd<Elem, D, RT><<<grid, T::THREADS + 32, T::smem_bytes(), stream>>>(a, p);  // + the producer warp
    fa::launch_combine<Elem, D>(a, p, stream);
    return static_cast<int>(cudaGetLastError());
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
using WidestTile = fa::DecodeTile<half, D, 2>;

}  // namespace

FA_EXPORT_DECODE_VARIANT(LaunchDecode, WidestTile)
