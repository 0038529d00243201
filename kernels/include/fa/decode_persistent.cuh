// Persistent decode CTAs (step 72 on): where a call's works outnumber the wave, as many CTAs of the TMA tile as a
// wave holds, each walking the works (row block, chunk, K/V head, sequence) blockIdx.x, blockIdx.x + gridDim.x, ...
// with one ring that runs on from one work to the next, so that the producer streams the next work's tiles while the
// consumers merge and write the last one's. The merge takes ring slots of its own (MergeSlots): the stages its tiles
// filled are the next work's.
// Included by the steps' translation units into their anonymous namespace, as fa/decode_launch.cuh is.
#pragma once

#include "fa/decode_launch.cuh"

namespace {

// The merge of a work's warps in the ring (fa::decode_merge_warps' steps, in other places): each warp's O, 16 rows at a
// time as 16 x D floats, in the stages of the SLOTS slots after the work's last tile (a stage's K part holds two such
// blocks, its V part two), with the 8-float chunks of block row r XORed by r % 4 so that a warp's float2 stores of
// one chunk meet no bank twice; each warp's row maxima and sums in `ml`, its own 2 x WARPS x BR floats. (put shares
// decode_merge_warps' first half, fa::decode_put_row_stats; its stores of O are its own: the same steps through an
// interface of places spilled at 32 rows.)
template <class T>
struct MergeSlots {
  using Elem = typename T::Elem;
  static constexpr int BLOCKS = T::WARPS * T::RT;  // 16-row blocks of fp32 O
  static constexpr int SLOTS = (BLOCKS + 3) / 4;
  static constexpr int ML_FLOATS = 2 * T::WARPS * T::BR;
  static_assert(16 * T::D * sizeof(float) == T::KV_ELEMS / 2 * sizeof(Elem), "two 16-row blocks a K or V part");
  static_assert(SLOTS < T::STAGES, "a stage streams the next work's keys during the merge");

  float* ml;
  Elem* sk;
  Elem* sv;
  unsigned slot0;  // the ring's slot of the first merge slot

  // The stage of merge slot s.
  __device__ __forceinline__ int stage(int s) const { return fa::ring_stage<T::STAGES>(slot0 + s); }
  // Block j: warp j / RT's rows 16 (j % RT) to 16 (j % RT) + 15.
  __device__ __forceinline__ float* block(int j) const {
    Elem* part = ((j / 2) % 2 ? sv : sk) + stage(j / 4) * T::KV_ELEMS + (j % 2) * (T::KV_ELEMS / 2);
    return reinterpret_cast<float*>(part);
  }
  // Where column col (a multiple of 2) of a block's row r is.
  __device__ __forceinline__ static int swizzled(int r, int col) { return r * T::D + (col ^ (8 * (r % 4))); }

  // The warps' partial results into the slots: maxima and sums, then each warp's O scaled to the row's max.
  __device__ __forceinline__ void put(const float (&o)[T::RT][T::D / 8][4], fa::RowState (&rows)[T::RT][2],
                                      int warp, int lane) const {
    float* red_m = ml;
    float* red_l = ml + T::WARPS * T::BR;
    const int g = lane / 4, tq = lane % 4;
    fa::decode_put_row_stats<T>(red_m, red_l, rows, warp, g, tq);
    fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);
#pragma unroll
    for (int mt = 0; mt < T::RT; ++mt) {
      float* dst = block(warp * T::RT + mt);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = mt * 16 + g + 8 * h;
        float m_all = fa::kNegInf;
#pragma unroll
        for (int w = 0; w < T::WARPS; ++w) m_all = fmaxf(m_all, red_m[w * T::BR + r]);
        const float f = rows[mt][h].m == fa::kNegInf ? 0.0f : fa::softmax_exp2<true>(rows[mt][h].m - m_all);
#pragma unroll
        for (int n = 0; n < T::D / 8; ++n)
          *reinterpret_cast<float2*>(dst + swizzled(g + 8 * h, n * 8 + 2 * tq)) =
              make_float2(o[mt][n][2 * h] * f, o[mt][n][2 * h + 1] * f);
      }
    }
    fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);
  }
  // Warp w's packed row r at column lo (below 8) of its chunks, and where its chunk from column c8 (a multiple of 8)
  // is from there (fa::decode_merged_row_from's places, as fa::PaddedMergeRows).
  __device__ __forceinline__ float* at(int w, int r, int lo) const {
    return block(w * T::RT + r / 16) + (r % 16) * T::D + lo;
  }
  __device__ __forceinline__ static int chunk(int r, int c8) { return c8 ^ (8 * (r % 4)); }
};

// A division by one of a call's divisors d (1 <= d <= INT_MAX) as a multiply-high, an add and a shift, exact for
// dividends up to INT_MAX (the round-up method of Granlund and Montgomery), its multiplier and shift made on the host:
// a run-time division is a software routine of some 36-40 instructions on the GPU, and a work's decode takes three.
struct FastDivisor {
  unsigned mul, shift;
  static FastDivisor of(unsigned d) {
    unsigned s = 0;
    while ((1ull << s) < d) ++s;
    return {static_cast<unsigned>(((1ull << 32) * ((1ull << s) - d)) / d + 1), s};
  }
  __device__ __forceinline__ unsigned div(unsigned n) const { return (__umulhi(n, mul) + n) >> shift; }
};

// The divisors of a call's work decode: row blocks x chunks (the works of a K/V head), K/V heads, row blocks.
struct WorkDivisors {
  FastDivisor per_head, kv_heads, row_blocks;
};

// A persistent CTA's work `item` (items in the order of decode_fwd's grid: row block and chunk fastest, then K/V head,
// then sequence): its rows, chunk, K/V head and sequence, and the chunk's keys; false where the chunk starts past a
// shorter sequence's end (the merge skips it). 32-bit: the launch takes the persistent kernel only where the items fit.
struct DecodeWork {
  int row0, split, kv, b, n, key_begin, key_end;
};

template <class T>
__device__ __forceinline__ bool decode_work(const fa::DecodeArgs& a, const fa::SplitPartials& p,
                                            const WorkDivisors& by, int item, DecodeWork& w) {
  const unsigned u = static_cast<unsigned>(item), row_blocks = static_cast<unsigned>(fa::ceil_div(a.rows, T::BR));
  const unsigned head = by.per_head.div(u), x = u - head * (row_blocks * static_cast<unsigned>(p.splits));
  const unsigned b = by.kv_heads.div(head);
  w.b = static_cast<int>(b), w.kv = static_cast<int>(head - b * static_cast<unsigned>(a.H_kv));
  const unsigned split = by.row_blocks.div(x);
  w.split = static_cast<int>(split), w.row0 = static_cast<int>(x - split * row_blocks) * T::BR;
  w.n = a.cache_lens[w.b];
  w.key_begin = w.split * p.chunk;
  w.key_end = min(w.key_begin + p.chunk, w.n);
  return w.key_begin < w.n;
}

// The tiles that run persistent: at D = 128 and 32 rows the loop over works spills (255 registers, decode_fwd's
// 246), so those calls keep step 70's grid.
template <int D, int RT>
constexpr bool kPersistent = !(D == 128 && RT == 2);

// The CTAs an SM the compiler leaves registers for (__launch_bounds__' minimum): decode_fwd runs 2 at D = 128 and 3 at
// D = 64 with 16 rows on an H100 or H200, which the loop over works must not lower. At 32 rows, 1: a bound of 2 spilled
// at D = 64, where the kernel's 194 registers give 2 CTAs an SM all the same (decode_fwd: 2 there).
template <int D, int RT>
constexpr int kCtasAnSm = RT == 1 ? (D == 128 ? 2 : 3) : 1;

// decode_fwd's CTA, persistent over `items` works. The producer's ring slots: each work's tiles, then the merge's
// SLOTS (no copy: it arrives on their full barriers itself, so that every use of a stage is one phase of both).
template <class Elem, int D, int RT>
__global__ void __launch_bounds__(fa::DecodeTile<Elem, D, RT>::THREADS + 32, kCtasAnSm<D, RT>)
    decode_fwd_persistent(const fa::DecodeArgs a, const fa::SplitPartials p,
                          const __grid_constant__ CUtensorMap k_map, const __grid_constant__ CUtensorMap v_map,
                          const int box_rows, const int items, const WorkDivisors by) {
  using T = TmaTile<Elem, D, RT>;
  using Layout = fa::Swizzled128<T>;
  using Merge = MergeSlots<T>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ fa::KvRing<T::STAGES> ring;
  __shared__ float merge_ml[Merge::ML_FLOATS];
  Elem* sk = reinterpret_cast<Elem*>(smem_raw);
  Elem* sv = sk + T::STAGES * T::KV_ELEMS;
  Elem* sq = sv + T::STAGES * T::KV_ELEMS;
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  if (tid == T::THREADS) fa::tma::prefetch_map(&k_map), fa::tma::prefetch_map(&v_map);
  ring.init(/*producer arrivals=*/1, /*consumer arrivals=*/T::THREADS);
  if (tid == 0) fa::tma::fence_barrier_init();
  __syncthreads();
  DecodeWork w;
  unsigned slot = 0;  // the ring's slot of the next tile, over every work of the CTA (counted unsigned: fa::ring_stage)
  if (warp == T::WARPS) {
    if (lane != 0) return;
    for (int item = blockIdx.x; item < items; item += gridDim.x) {
      if (!decode_work<T>(a, p, by, item, w)) continue;
      const int tiles = fa::ceil_div(w.key_end - w.key_begin, T::BC);
      fa::produce_boxes<T>(ring, sk, sv, &k_map, &v_map, a, w.b, w.kv, w.key_begin, w.key_end, tiles, box_rows,
                           slot);
      slot += tiles;
      for (int s = 0; s < Merge::SLOTS; ++s, ++slot) {
        const int st = fa::ring_stage<T::STAGES>(slot);
        if (slot >= T::STAGES) fa::mbarrier_wait(&ring.empty[st], fa::ring_parity<T::STAGES>(slot - T::STAGES));
        fa::mbarrier_arrive(&ring.full[st]);
      }
    }
    return;
  }

  const float scale_log2 = a.scale * 1.4426950408889634f;
  for (int item = blockIdx.x; item < items; item += gridDim.x) {
    if (!decode_work<T>(a, p, by, item, w)) continue;
    const int tiles = fa::ceil_div(w.key_end - w.key_begin, T::BC);
    fa::decode_load_q<T>(sq, a, w.b, w.kv, w.row0, tid);
    int limit[RT][2];
    fa::decode_row_limits<T>(limit, a, w.n, w.row0, w.key_end, lane);
    float o[RT][D / 8][4] = {};
    fa::RowState rows[RT][2];
    fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);  // Q is in shared memory
    for (int tile = 0; tile < tiles; ++tile)
      decode_consume_tile<T, Layout>(ring, slot + tile, o, rows, sq, sk, sv, w.key_begin + tile * T::BC, w.key_end,
                                     limit, scale_log2, warp, lane);
    slot += tiles;
    // Every consumer is past the work's last tile: the merge slots' stages and Q's buffer are free. Each merge slot's
    // full barrier is waited on as a tile's is (the producer's arrival, there long since), so that every phase of
    // a barrier has its wait (compute-sanitizer's synccheck).
    for (int s = 0; s < Merge::SLOTS; ++s)
      fa::mbarrier_wait(&ring.full[fa::ring_stage<T::STAGES>(slot + s)], fa::ring_parity<T::STAGES>(slot + s));
    fa::named_barrier_sync(fa::kBarrierConsumers, T::THREADS);
    const Merge merge{merge_ml, sk, sv, slot};
    merge.put(o, rows, warp, lane);
    fa::decode_write_merged<T>(fa::MergedRows<T, Merge>{merge_ml, merge}, a, p, w.b, w.kv, w.row0, w.split, tid);
    fa::wgmma::fence_proxy_async();  // this thread's merge writes before the copy engine's next ones there
#pragma unroll
    for (int s = 0; s < Merge::SLOTS; ++s) fa::mbarrier_arrive(&ring.empty[fa::ring_stage<T::STAGES>(slot + s)]);
    slot += Merge::SLOTS;
  }
}

// LaunchDecodeWide (its plans, maps, merges and workspace) with the TMA tile's calls of more works than a wave (SMs x
// the kernel's CTAs an SM) on a wave of persistent CTAs; the others on step 70's grid, the row-warp calls step 46's.
template <class Elem, int D, class WideRule, class Promotion>
struct LaunchDecodePersistent : LaunchDecodeWide<Elem, D, WideRule, /*PREFETCH_MAPS=*/true, Promotion> {
  using Base = LaunchDecodeWide<Elem, D, WideRule, /*PREFETCH_MAPS=*/true, Promotion>;
  template <int RT>
  static int launch(const fa::DecodeArgs& a, fa::SplitPartials p, void* workspace, long long bytes,
                    cudaStream_t stream) {
    if constexpr (kPersistent<D, RT>)
      return launch_persistent<RT>(a, p, workspace, bytes, stream);
    else
      return Base::template launch<RT>(a, p, workspace, bytes, stream);
  }
  template <int RT>
  static int launch_persistent(const fa::DecodeArgs& a, fa::SplitPartials p, void* workspace, long long bytes,
                               cudaStream_t stream) {
    using T = TmaTile<Elem, D, RT>;
    long long wave = 0;
    int sms = 0;
    if (int err = Base::template wave_for<T>(decode_fwd_persistent<half, D, RT>, T::THREADS + 32, &wave, &sms))
      return err;
    const int row_blocks = fa::ceil_div(a.rows, T::BR);
    const long long items = static_cast<long long>(row_blocks) * p.splits * a.H_kv * a.B;
    // Step 70's grid where a CTA would take one work (its CTAs read their work from blockIdx, with no decode and no
    // merge to hide behind the next work's loads) or where the works do not fit an int; it binds its own workspace
    // and makes its own maps.
    if (items <= wave || items > INT_MAX - wave) return Base::template launch<RT>(a, p, workspace, bytes, stream);
    if (int err = fa::bind_workspace(a, p, D, workspace, bytes)) return err;
    if (int err = fa::opt_in_shared_memory<T>(decode_fwd_persistent<Elem, D, RT>)) return err;
    CUtensorMap k_map, v_map;
    int box_rows = 0;
    if (int err = Base::cache_maps(a, T::BC, &k_map, &v_map, &box_rows)) return err;
    const WorkDivisors by{FastDivisor::of(static_cast<unsigned>(row_blocks * p.splits)),
                          FastDivisor::of(static_cast<unsigned>(a.H_kv)),
                          FastDivisor::of(static_cast<unsigned>(row_blocks))};
    decode_fwd_persistent<Elem, D, RT><<<static_cast<unsigned>(wave), T::THREADS + 32, T::smem_bytes(), stream>>>(
        a, p, k_map, v_map, box_rows, static_cast<int>(items), by);
    if (int err = static_cast<int>(cudaGetLastError())) return err;
    return Base::merge(a, p, stream);
  }
  static int run(const fa::DecodeArgs& a, void* workspace, long long bytes, cudaStream_t stream) {
    fa::SplitPartials p{};
    typename Base::Path path = Base::Path::kTile16;
    if (int err = Base::plan_call(a.B, a.H_kv, a.rows, fa::decode_capacity(a), p, &path)) return err;
    switch (path) {
      case Base::Path::kTile16: return launch<1>(a, p, workspace, bytes, stream);
      case Base::Path::kTile32: return launch<2>(a, p, workspace, bytes, stream);
      default: return Base::launch_row_warps(a, p, workspace, bytes, stream);
    }
  }
};

}  // namespace
