// Step 38 - +split keys (flash-decoding): where (sequence, K/V head) pairs are too few to fill the
// GPU, each pair's keys are split into chunks, a CTA a chunk, every CTA leaving its rows' O (divided
// by its own sum) and log-sum-exp in a workspace; a second kernel merges a row's chunks by their
// log-sum-exps (fa::decode_combine_splits). The rule: where the pairs fill less than a wave of CTAs
// (CTAs an SM from the occupancy calculator), enough chunks for two waves, so that equal chunks keep
// every SM busy to the end; chunks of at least 256 keys (the merge's traffic stays a small fraction
// of the cache's), all of one size from the cache's capacity, so that a shorter sequence of a mixed
// batch has fewer chunks, not shorter ones.
// One chunk: step 37's kernel as it was, no workspace, no second kernel.
// Hypothesis: step 37 reads 0.05 of the copy bandwidth at batch 1 (8 CTAs on 132 SMs), 0.34 at
// batch 8 of Llama-3-8B (64 CTAs): with every SM busy the cache streams at the rate step 37 reached
// with 512 CTAs (0.88 of the copy at batch 64), plus the merge's few microseconds.
// Predicted: 2-20x at batch 1 and 8 (DRAM throughput up), 1.0x at batch 64 (a wave of pairs: one chunk).
#include "fa/decode.cuh"

namespace {


template <class Elem, int D, int RT, int STAGES>
__global__ void __launch_bounds__(fa::DecodeTile<Elem, D, RT, STAGES>::THREADS)
    decode_fwd(const fa::DecodeArgs a, const fa::SplitPartials p) {
  using T = fa::DecodeTile<Elem, D, RT, STAGES>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
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
  float o[RT][D / 8][4] = {};
  fa::RowState rows[RT][2];
  fa::decode_attend_range<T>(o, rows, sq, sk, sv, a, b, kv, row0, n, key_begin, key_end);

  // The stages become the merge buffer.
  auto* red = reinterpret_cast<float*>(sk);
  fa::decode_merge_warps<T>(red, o, rows, warp, lane);
  fa::decode_write_rows<T>(red, a, p, b, kv, row0, split, tid);
}

template <class Elem, int D>
struct LaunchDecode {
  // The chunks of a call (fa::split_chunks), from the SMs and this kernel's CTAs an SM.
  template <int RT, int STAGES>
  static int plan(int B, int H_kv, int rows, int capacity, fa::SplitPartials& p) {
    using T = fa::DecodeTile<Elem, D, RT, STAGES>;
    // CTAs an SM, from the occupancy calculator once (internal linkage: per library), of the fp16
    // kernel for both element types, so that workspace_bytes (which has no type) plans alike.
    static int per_sm = 0;
    int sms = 0;
    if (int err = fa::multiprocessor_count(&sms)) return err;
    if (per_sm == 0) {
      if (int err = fa::opt_in_shared_memory<T>(decode_fwd<half, D, RT, STAGES>)) return err;
      const cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, decode_fwd<half, D, RT, STAGES>,
                                                                            T::THREADS, T::smem_bytes());
      if (err != cudaSuccess) return static_cast<int>(err);
      per_sm = per_sm > 0 ? per_sm : 1;
    }
    const long long pairs = static_cast<long long>(fa::ceil_div(rows, T::BR)) * H_kv * B;
    fa::split_chunks(pairs, static_cast<long long>(sms) * per_sm, capacity, T::BC, p);
    return 0;
  }
  template <int RT, int STAGES>
  static int launch(const fa::DecodeArgs& a, void* workspace, long long bytes, cudaStream_t stream) {
    using T = fa::DecodeTile<Elem, D, RT, STAGES>;
    fa::SplitPartials p{};
    if (int err = plan<RT, STAGES>(a.B, a.H_kv, a.rows, fa::decode_capacity(a), p)) return err;
    if (int err = fa::bind_workspace(a, p, D, workspace, bytes)) return err;
    if (int err = fa::opt_in_shared_memory<T>(decode_fwd<Elem, D, RT, STAGES>)) return err;
    const dim3 grid(fa::ceil_div(a.rows, T::BR) * p.splits, a.H_kv, a.B);
    decode_fwd<Elem, D, RT, STAGES><<<grid, T::THREADS, T::smem_bytes(), stream>>>(a, p);
    fa::launch_combine<Elem, D>(a, p, stream);
    return static_cast<int>(cudaGetLastError());
  }
  static int run(const fa::DecodeArgs& a, void* workspace, long long bytes, cudaStream_t stream) {
    int stages = 3;
    if (int err = fa::decode_stages_fit<Elem, D>(&stages)) return err;
    if constexpr (D == 128)
      if (stages == 2)
        return a.rows <= 16 ? launch<1, 2>(a, workspace, bytes, stream) : launch<2, 2>(a, workspace, bytes, stream);
    return a.rows <= 16 ? launch<1, 3>(a, workspace, bytes, stream) : launch<2, 3>(a, workspace, bytes, stream);
  }
  static long long workspace_bytes(int B, int q_len, int H, int H_kv, int capacity) {
    if (B < 1 || q_len < 1 || H_kv < 1 || H % H_kv || capacity < 1) return -1;
    const int rows = q_len * (H / H_kv);
    fa::SplitPartials p{};
    int stages = 3;
    if (fa::decode_stages_fit<half, D>(&stages)) return -1;
    const bool two = D == 128 && stages == 2;
    const int err = rows <= 16 ? (two ? plan<1, 2>(B, H_kv, rows, capacity, p) : plan<1, 3>(B, H_kv, rows, capacity, p))
                               : (two ? plan<2, 2>(B, H_kv, rows, capacity, p) : plan<2, 3>(B, H_kv, rows, capacity, p));
    if (err) return -1;
    return fa::workspace_bytes_for(p, B, q_len, H, D);
  }
};

template <int D>
using WidestTile = fa::DecodeTile<half, D, 2>;  // three stages (two at D = 128 on sm_86 and sm_89)

}  // namespace

FA_EXPORT_DECODE_VARIANT(LaunchDecode, WidestTile)
