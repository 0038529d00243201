// Step 37 - decode: one CTA per (sequence, K/V head) with every query head of that K/V head in it.
// The root of the decode branch (issue 50): 1 to 8 new queries a sequence against its K/V cache,
// contiguous or paged, lengths per sequence, the bottom-right mask (fa/decode.cuh holds the
// problem's layouts). The tools are the portable branch's: mma.sync m16n8k16 with ldmatrix, S and P
// in registers, K/V through a 3-stage cp.async ring. What is new is the packing: the q_len x group
// query rows that read one K/V head are one CTA's rows, so the head's cache is read once for the
// group, and the 4 warps split each 64-key tile (16 keys each, a running softmax each), merged once
// at the end. Query rows past 16 take a second m-tile; past 32 (Falcon's 71 query heads a K/V head),
// further CTAs re-read the head's K/V, from L2 while they run side by side.
// Hypothesis: memory-bound with the cache read once a group; the grid is B x H_kv CTAs, so below
// one CTA an SM's worth of (sequence, K/V head) pairs (8 x 8 = 64 on 132 SMs) the GPU is part idle,
// and at batch 1 almost wholly: DRAM throughput is about the fraction of SMs busy.
// Predicted: 1.0x (the branch's root; its reference is the peers).
#include "fa/decode.cuh"

namespace {

template <class Elem, int D, int RT, int STAGES>
__global__ void __launch_bounds__(fa::DecodeTile<Elem, D, RT, STAGES>::THREADS)
    decode_fwd(const fa::DecodeArgs a) {
  using T = fa::DecodeTile<Elem, D, RT, STAGES>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  Elem* sq = reinterpret_cast<Elem*>(smem_raw);
  Elem* sk = sq + T::Q_ELEMS;
  Elem* sv = sk + T::STAGES * T::KV_ELEMS;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int row0 = blockIdx.x * T::BR, kv = blockIdx.y, b = blockIdx.z;
  const int n = a.cache_lens[b];
  float o[RT][D / 8][4] = {};
  fa::RowState rows[RT][2];
  fa::decode_attend_range<T>(o, rows, sq, sk, sv, a, b, kv, row0, n, 0, n);

  // The stages become the merge buffer.
  auto* red = reinterpret_cast<float*>(sk);
  fa::decode_merge_warps<T>(red, o, rows, warp, lane);
  fa::decode_write_rows<T>(red, a, fa::SplitPartials{nullptr, nullptr, 1, 0}, b, kv, row0, 0, tid);  // one chunk
}

// One 16-row m-tile where the packed rows fit it (one new query with up to 16 query heads a K/V
// head), else two; more rows than 32 take more CTAs (gridDim.x).
template <class Elem, int D>
struct LaunchDecode {
  template <int RT, int STAGES>
  static int launch(const fa::DecodeArgs& a, cudaStream_t stream) {
    using T = fa::DecodeTile<Elem, D, RT, STAGES>;
    if (int err = fa::opt_in_shared_memory<T>(decode_fwd<Elem, D, RT, STAGES>)) return err;
    const dim3 grid(fa::ceil_div(a.rows, T::BR), a.H_kv, a.B);
    decode_fwd<Elem, D, RT, STAGES><<<grid, T::THREADS, T::smem_bytes(), stream>>>(a);
    return static_cast<int>(cudaGetLastError());
  }
  static int run(const fa::DecodeArgs& a, void*, long long, cudaStream_t stream) {
    int stages = 3;
    if (int err = fa::decode_stages_fit<Elem, D>(&stages)) return err;
    if constexpr (D == 128)
      if (stages == 2) return a.rows <= 16 ? launch<1, 2>(a, stream) : launch<2, 2>(a, stream);
    return a.rows <= 16 ? launch<1, 3>(a, stream) : launch<2, 3>(a, stream);
  }
  static long long workspace_bytes(int, int, int, int, int) { return 0; }
};

template <int D>
using WidestTile = fa::DecodeTile<half, D, 2>;  // three stages (two at D = 128 on sm_86 and sm_89)

}  // namespace

FA_EXPORT_DECODE_VARIANT(LaunchDecode, WidestTile)
