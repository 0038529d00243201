// Decode attention (the decode branch of the ladder, issue 50): each of B sequences brings q_len new
// queries (1 to 8) that attend to its K/V cache. The problem's layouts are lab.kernels.decode's:
//   q, o        (B, q_len, H, D)
//   k, v cache  (B, S_max, H_kv, D), or paged: (pages, page_size, H_kv, D) with block_table
//               (B, table_stride) int32, token t of sequence b at page block_table[b, t / page_size]
//   cache_lens  (B,) int32, each sequence's valid tokens, its new ones included
// Query i of a sequence of n tokens sees keys 0 .. n - q_len + i (the bottom-right mask).
//
// Grouped-query packing: the query rows a CTA computes are the q_len x group queries that read one
// K/V head (row r = i * group + h: new query i, query head kv * group + h), so the head's cache is
// read once for all of them and the rows fill an mma's 16-row tile.
#pragma once

#include "fa/common.cuh"
#include "fa/mma_attention.cuh"
#include "fa/pipeline.cuh"
#include "fa/softmax.cuh"

namespace fa {
// Internal linkage for all of it, like fa::launch: a template's instance or a function-local static
// (decode_smem_fits's limits) would otherwise be one object shared by every library in a process.
namespace {

// Everything a decode kernel needs besides its tile constants (passed by value).
struct DecodeArgs {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  const int* cache_lens;
  const int* block_table;  // nullptr: an unpaged cache
  int B, q_len, H, H_kv;
  int group;         // H / H_kv, query heads a K/V head serves
  int rows;          // q_len * group, the packed query rows of one (sequence, K/V head)
  int table_stride;  // paged: block_table's row length (pages a sequence may hold)
  int page_shift;    // paged: log2 of the tokens a page holds
  int seq_tokens;    // unpaged: S_max, the tokens a sequence's row of the cache holds
  int cache_dim0;    // the cache's first dimension: B unpaged, its pages paged (a tensor map's extent)
  float scale;
};

// The cache slot (token row of its first dimensions) of token t of sequence b: a page lookup where
// paged (page sizes are powers of two), else one row of seq_tokens a sequence.
__device__ __forceinline__ size_t cache_slot(const DecodeArgs& a, int b, int t) {
  if (a.block_table != nullptr) {
    const int page = a.block_table[static_cast<size_t>(b) * a.table_stride + (t >> a.page_shift)];
    return (static_cast<size_t>(page) << a.page_shift) + (t & ((1 << a.page_shift) - 1));
  }
  return static_cast<size_t>(b) * a.seq_tokens + t;
}

// Element offset of token t of sequence b, K/V head kv, in the cache.
template <int D>
__device__ __forceinline__ size_t cache_offset(const DecodeArgs& a, int b, int t, int kv) {
  return (cache_slot(a, b, t) * a.H_kv + kv) * D;
}

// Element offset of packed query row r of sequence b, K/V head kv, in q and o.
template <int D>
__device__ __forceinline__ size_t query_offset(const DecodeArgs& a, int b, int kv, int r) {
  const int i = r / a.group, h = kv * a.group + r % a.group;
  return ((static_cast<size_t>(b) * a.q_len + i) * a.H + h) * D;
}

// The tile of a decode CTA: RT 16-row m-tiles of packed query rows (BR rows), keys streamed in tiles
// of BC through a ring of STAGES shared-memory stages, each of the 4 warps taking 16 keys of a tile
// with its own running softmax; the warps' partial results are merged once, at the end. Three stages
// at D = 128 take 109 KB, more than sm_86 and sm_89 let a block have (99 KB): there a portable step
// runs two (decode_stages_fit).
template <class Elem_, int D_, int RT_, int STAGES_ = 3>
struct DecodeTile {
  using Elem = Elem_;
  static constexpr int D = D_;
  static constexpr int RT = RT_;
  static constexpr int WARPS = 4;
  static constexpr int THREADS = 32 * WARPS;
  static constexpr int WARP_KEYS = 16;  // one k-step of the P V mma
  static constexpr int BC = WARPS * WARP_KEYS;
  static constexpr int BR = 16 * RT;
  static constexpr int STAGES = STAGES_;
  static constexpr int LD = D + 8;  // 16 bytes of padding: ldmatrix rows on distinct bank quads
  static constexpr int Q_ELEMS = BR * LD;
  static constexpr int KV_ELEMS = BC * LD;
  // The merge of the warps' results reuses the K/V stages: m and l per (warp, row), then O.
  static constexpr int OLD = D + 4;  // floats a row of the merge buffer (2 stages of D = 128 hold it)
  static constexpr size_t MERGE_BYTES = (2 * WARPS * BR + WARPS * BR * OLD) * sizeof(float);
  static constexpr size_t STAGE_BYTES = 2 * STAGES * KV_ELEMS * sizeof(Elem);
  static_assert(MERGE_BYTES <= STAGE_BYTES, "the merge buffer must fit in the K/V stages");
  static constexpr size_t smem_bytes() { return Q_ELEMS * sizeof(Elem) + STAGE_BYTES; }
};

// Copy keys [key0, key0 + BC) of (sequence b, K/V head kv) into a stage with cp.async, one 16-byte
// chunk a thread at a time, consecutive threads on consecutive chunks of a token's row; tokens at or
// past key_end are zero-filled (and never looked up in the block table).
template <class T>
__device__ __forceinline__ void decode_issue_kv_tile(typename T::Elem* sk, typename T::Elem* sv,
                                                     const typename T::Elem* k, const typename T::Elem* v,
                                                     const DecodeArgs& a, int b, int kv, int key0, int key_end,
                                                     int tid) {
  constexpr int CHUNKS = T::D / 8;
  constexpr int ROWS_PER_PASS = T::THREADS / CHUNKS;
  const int col = (tid % CHUNKS) * 8;
#pragma unroll
  for (int r = tid / CHUNKS; r < T::BC; r += ROWS_PER_PASS) {
    const int t = key0 + r;
    const bool valid = t < key_end;
    const size_t off = valid ? cache_offset<T::D>(a, b, t, kv) + col : 0;
    cp_async_16(sk + r * T::LD + col, k + off, valid);
    cp_async_16(sv + r * T::LD + col, v + off, valid);
  }
}

// The CTA's BR packed query rows into shared memory (rows past a.rows zero), by its THREADS threads; or
// ROWS rows from row0 by THREADS threads (a row-warp's 16 rows by its 32 lanes: ROWS = 16, THREADS = 32).
template <class T, int ROWS = T::BR, int THREADS = T::THREADS>
__device__ __forceinline__ void decode_load_q(typename T::Elem* sq, const DecodeArgs& a, int b, int kv, int row0,
                                              int tid) {
  constexpr int CHUNKS = T::D / 8;
  const auto* q = static_cast<const typename T::Elem*>(a.q);
  for (int c = tid; c < ROWS * CHUNKS; c += THREADS) {
    const int r = c / CHUNKS, col = (c % CHUNKS) * 8;
    uint4 x = make_uint4(0, 0, 0, 0);
    if (row0 + r < a.rows) x = *reinterpret_cast<const uint4*>(q + query_offset<T::D>(a, b, kv, row0 + r) + col);
    *reinterpret_cast<uint4*>(sq + r * T::LD + col) = x;
  }
}

// Where element (row, col) of a K or V stage is, from the first row a warp reads (col a multiple of
// 8): rows of T::LD elements (16 bytes of padding a row), or (Swizzled128) the copy engine's 128-byte
// swizzle, 64-column blocks of BC rows, 16-byte chunk c of row r at chunk c ^ (r % 8) (rows a multiple
// of 8 from the block's start, which every warp's first row is).
template <class T>
struct PaddedRows {
  __device__ static int at(int row, int col) { return row * T::LD + col; }
  __device__ static int warp_rows(int first_row) { return first_row * T::LD; }
};
template <class T>
struct Swizzled128 {
  static constexpr int ROW = 64;  // elements from a row to the next (rows 8 apart share a swizzle)
  __device__ static int at(int row, int col) {
    return (col / 64) * (T::BC * 64) + row * 64 + ((((col % 64) / 8) ^ (row % 8)) * 8);
  }
  __device__ static int warp_rows(int first_row) { return first_row * 64; }
};

// One warp's 16 keys of a stage, key0 the first of them: S = Q K^T for the CTA's rows, the online
// softmax (keys at or past limit[mt][h] masked, h = rows g and g + 8 of m-tile mt), O = alpha O + P V.
// sk_w and sv_w point at the warp's first row of the stage (Layout::warp_rows).
template <class T, class Layout = PaddedRows<T>>
__device__ __forceinline__ void decode_warp_keys(float (&o)[T::RT][T::D / 8][4], RowState (&rows)[T::RT][2],
                                                 const typename T::Elem* sq, const typename T::Elem* sk_w,
                                                 const typename T::Elem* sv_w, int key0, const int (&limit)[T::RT][2],
                                                 float scale_log2, int lane) {
  using Elem = typename T::Elem;
  float s[T::RT][2][4] = {};
#pragma unroll
  for (int kk = 0; kk < T::D / 16; kk += 2) {
    unsigned bk[2][4];
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) ldmatrix_x4(bk[nt], sk_w + Layout::at(nt * 8 + lane % 8, kk * 16 + (lane / 8) * 8));
#pragma unroll
    for (int mt = 0; mt < T::RT; ++mt) {
      unsigned qa[2][4];
#pragma unroll
      for (int j = 0; j < 2; ++j)
        ldmatrix_x4(qa[j], sq + (mt * 16 + lane % 16) * T::LD + (kk + j) * 16 + (lane / 16) * 8);
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
        mma_16816_k_pair<Elem>(s[mt][nt], qa[0], qa[1], bk[nt]);
      }
    }
  }
  const int tq = lane % 4;
  unsigned pa[T::RT][4];
#pragma unroll
  for (int mt = 0; mt < T::RT; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = kNegInf;
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int key = key0 + nt * 8 + 2 * tq + c;
          const float x = key < limit[mt][h] ? s[mt][nt][2 * h + c] * scale_log2 : kNegInf;
          s[mt][nt][2 * h + c] = x;
          mx = fmaxf(mx, x);
        }
      RowState& row = rows[mt][h];
      const float m_new = fmaxf(row.m, group_max<4>(mx));
      // A row with no visible key yet keeps alpha 1 and P 0 (exp2(-inf - -inf) would be NaN).
      const float base = m_new == kNegInf ? 0.0f : m_new;
      const float alpha = softmax_exp2<true>(row.m - base);
      float sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const float p = softmax_exp2<true>(s[mt][nt][2 * h + c] - base);
          s[mt][nt][2 * h + c] = p;
          sum += p;
        }
      row.l = row.l * alpha + sum;
      row.m = m_new;
#pragma unroll
      for (int n = 0; n < T::D / 8; ++n) {
        o[mt][n][2 * h] *= alpha;
        o[mt][n][2 * h + 1] *= alpha;
      }
    }
    pa[mt][0] = pack2<Elem>(s[mt][0][0], s[mt][0][1]);
    pa[mt][1] = pack2<Elem>(s[mt][0][2], s[mt][0][3]);
    pa[mt][2] = pack2<Elem>(s[mt][1][0], s[mt][1][1]);
    pa[mt][3] = pack2<Elem>(s[mt][1][2], s[mt][1][3]);
  }
#pragma unroll
  for (int dn = 0; dn < T::D / 16; ++dn) {
    unsigned bv[4];
    ldmatrix_x4_trans(bv, sv_w + Layout::at(lane % 16, dn * 16 + (lane / 16) * 8));
#pragma unroll
    for (int mt = 0; mt < T::RT; ++mt) {
      mma_16816_n_pair<Elem>(o[mt][2 * dn], o[mt][2 * dn + 1], pa[mt], bv);
    }
  }
}

// One warp's 16 packed query rows against all BC keys of a stage (the row-warp tile of a wide group,
// step 46 on: each warp owns an m-tile, so no warp repeats another's K/V reads from L2 and no merge of
// warps follows): S = Q K^T from the warp's 16 rows of Q in shared memory (sq_w, T::LD a row), the online
// softmax (keys at or past limit[h] masked, h = rows g and g + 8), O = alpha O + P V. sk_t and sv_t point
// at the stage's first row (Layout as decode_warp_keys', with ROW: its row stride in a swizzle block).
template <class T, class Layout>
__device__ __forceinline__ void decode_row_warp_keys(float (&o)[T::D / 8][4], RowState (&rows)[2],
                                                     const typename T::Elem* sq_w, const typename T::Elem* sk_t,
                                                     const typename T::Elem* sv_t, int key0, const int (&limit)[2],
                                                     float scale_log2, int lane) {
  using Elem = typename T::Elem;
  constexpr int NT = T::BC / 8;  // 8-key n-tiles of S
  float s[NT][4] = {};
#pragma unroll
  for (int kk = 0; kk < T::D / 16; kk += 2) {
    unsigned qa[2][4];
#pragma unroll
    for (int j = 0; j < 2; ++j) ldmatrix_x4(qa[j], sq_w + (lane % 16) * T::LD + (kk + j) * 16 + (lane / 16) * 8);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      unsigned bk[4];
      ldmatrix_x4(bk, sk_t + nt * 8 * Layout::ROW + Layout::at(lane % 8, kk * 16 + (lane / 8) * 8));
      mma_16816_k_pair<Elem>(s[nt], qa[0], qa[1], bk);
    }
  }
  const int tq = lane % 4;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float mx = kNegInf;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int key = key0 + nt * 8 + 2 * tq + c;
        const float x = key < limit[h] ? s[nt][2 * h + c] * scale_log2 : kNegInf;
        s[nt][2 * h + c] = x;
        mx = fmaxf(mx, x);
      }
    RowState& row = rows[h];
    const float m_new = fmaxf(row.m, group_max<4>(mx));
    const float base = m_new == kNegInf ? 0.0f : m_new;  // as decode_warp_keys: no NaN before a visible key
    const float alpha = softmax_exp2<true>(row.m - base);
    float sum = 0.0f;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const float p = softmax_exp2<true>(s[nt][2 * h + c] - base);
        s[nt][2 * h + c] = p;
        sum += p;
      }
    row.l = row.l * alpha + sum;
    row.m = m_new;
#pragma unroll
    for (int n = 0; n < T::D / 8; ++n) {
      o[n][2 * h] *= alpha;
      o[n][2 * h + 1] *= alpha;
    }
  }
  unsigned pa[T::BC / 16][4];  // P as the A fragments of the P V mma, one a 16-key step
#pragma unroll
  for (int kt = 0; kt < T::BC / 16; ++kt) {
    pa[kt][0] = pack2<Elem>(s[2 * kt][0], s[2 * kt][1]);
    pa[kt][1] = pack2<Elem>(s[2 * kt][2], s[2 * kt][3]);
    pa[kt][2] = pack2<Elem>(s[2 * kt + 1][0], s[2 * kt + 1][1]);
    pa[kt][3] = pack2<Elem>(s[2 * kt + 1][2], s[2 * kt + 1][3]);
  }
#pragma unroll
  for (int dn = 0; dn < T::D / 16; ++dn)
#pragma unroll
    for (int kt = 0; kt < T::BC / 16; ++kt) {
      unsigned bv[4];
      ldmatrix_x4_trans(bv, sv_t + kt * 16 * Layout::ROW + Layout::at(lane % 16, dn * 16 + (lane / 16) * 8));
      mma_16816_n_pair<Elem>(o[2 * dn], o[2 * dn + 1], pa[kt], bv);
    }
}

// The key limit (one past the last visible key) of each row a thread holds, for keys up to key_end:
// packed row r is new query r / group, which sees keys below n - q_len + 1 + r / group. Rows past
// a.rows (padding, never stored) take the last query's.
template <class T>
__device__ __forceinline__ void decode_row_limits(int (&limit)[T::RT][2], const DecodeArgs& a, int n, int row0,
                                                  int key_end, int lane) {
#pragma unroll
  for (int mt = 0; mt < T::RT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row0 + mt * 16 + lane / 4 + 8 * h;
      const int i = min(r / a.group, a.q_len - 1);
      limit[mt][h] = min(n - a.q_len + 1 + i, key_end);
    }
}

// Keys [key_begin, key_end) of (sequence b, K/V head kv) for the CTA's BR rows from row0: streamed
// through the STAGES-deep cp.async ring, each warp taking 16 keys of every tile into its running
// softmax (o, rows). n is the sequence's length (the mask's reference); Q is copied to sq here. On
// return every copy has landed and every warp is past its last tile: the stages are free.
template <class T>
__device__ __forceinline__ void decode_attend_range(float (&o)[T::RT][T::D / 8][4], RowState (&rows)[T::RT][2],
                                                    typename T::Elem* sq, typename T::Elem* sk, typename T::Elem* sv,
                                                    const DecodeArgs& a, int b, int kv, int row0, int n,
                                                    int key_begin, int key_end) {
  using Elem = typename T::Elem;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const auto* k = static_cast<const Elem*>(a.k);
  const auto* v = static_cast<const Elem*>(a.v);
  const int tiles = key_end > key_begin ? ceil_div(key_end - key_begin, T::BC) : 0;

  // The first STAGES - 1 tiles are in flight while Q is copied.
  for (int tile = 0; tile < T::STAGES - 1; ++tile) {
    if (tile < tiles)
      decode_issue_kv_tile<T>(sk + tile * T::KV_ELEMS, sv + tile * T::KV_ELEMS, k, v, a, b, kv,
                              key_begin + tile * T::BC, key_end, tid);
    cp_async_commit();
  }
  decode_load_q<T>(sq, a, b, kv, row0, tid);

  int limit[T::RT][2];
  decode_row_limits<T>(limit, a, n, row0, key_end, lane);
  const float scale_log2 = a.scale * 1.4426950408889634f;
  for (int tile = 0; tile < tiles; ++tile) {
    cp_async_wait_group<T::STAGES - 2>();
    __syncthreads();  // the tile has landed for every thread; every warp is done with the stage refilled next
    const int next = tile + T::STAGES - 1;
    if (next < tiles) {
      const int st = next % T::STAGES;
      decode_issue_kv_tile<T>(sk + st * T::KV_ELEMS, sv + st * T::KV_ELEMS, k, v, a, b, kv, key_begin + next * T::BC,
                              key_end, tid);
    }
    cp_async_commit();
    const int off = (tile % T::STAGES) * T::KV_ELEMS + warp * T::WARP_KEYS * T::LD;
    decode_warp_keys<T>(o, rows, sq, sk + off, sv + off, key_begin + tile * T::BC + warp * T::WARP_KEYS, limit,
                        scale_log2, lane);
  }
  cp_async_wait_all();
  __syncthreads();
}

// The barrier of the T::WARPS warps that compute: the whole CTA, or (CONSUMERS_ONLY: a CTA with a
// producer warp besides them, which has left) the consumers' named barrier.
template <class T, bool CONSUMERS_ONLY>
__device__ __forceinline__ void decode_sync() {
  if constexpr (CONSUMERS_ONLY) named_barrier_sync(kBarrierConsumers, T::THREADS);
  else __syncthreads();
}

// Where decode_merge_warps puts warp w's scaled O: after the maxima and sums of `red`, rows of OLD floats.
// at(w, r, lo) + chunk(r, c8): warp w's packed row r at column c8 + lo (c8 a multiple of 8, lo below 8); the
// interface of decode_merged_row_from's places (fa/decode_persistent.cuh has another).
template <class T>
struct PaddedMergeRows {
  float* red_o;
  __device__ __forceinline__ float* at(int w, int r, int lo) const { return red_o + (w * T::BR + r) * T::OLD + lo; }
  __device__ __forceinline__ static int chunk(int, int c8) { return c8; }
};

// A warp's row maxima and sums (each row's sum over its quad) into red_m and red_l, WARPS x BR floats each: the first
// half of a merge of the warps' partial results (decode_merge_warps, fa/decode_persistent.cuh's MergeSlots::put).
// g and tq: the lane's row in a 16-row block and its place in the row's quad (lane / 4, lane % 4).
template <class T>
__device__ __forceinline__ void decode_put_row_stats(float* red_m, float* red_l, RowState (&rows)[T::RT][2], int warp,
                                                     int g, int tq) {
#pragma unroll
  for (int mt = 0; mt < T::RT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = mt * 16 + g + 8 * h;
      const float l = group_sum<4>(rows[mt][h].l);
      if (tq == 0) {
        red_m[warp * T::BR + r] = rows[mt][h].m;
        red_l[warp * T::BR + r] = l;
      }
    }
}

// The merge of the warps' partial results, in shared memory `red` (the K/V stages, free once every
// copy has landed and every warp is past its last tile: the caller syncs first): each warp's row max
// and sum, then its O scaled to the CTA's row max. Afterwards decode_merged_row gives a row's result.
template <class T, bool CONSUMERS_ONLY = false>
__device__ __forceinline__ void decode_merge_warps(float* red, const float (&o)[T::RT][T::D / 8][4],
                                                   RowState (&rows)[T::RT][2], int warp, int lane) {
  float* red_m = red;
  float* red_l = red_m + T::WARPS * T::BR;
  float* red_o = red_l + T::WARPS * T::BR;
  const int g = lane / 4, tq = lane % 4;
  decode_put_row_stats<T>(red_m, red_l, rows, warp, g, tq);
  decode_sync<T, CONSUMERS_ONLY>();
#pragma unroll
  for (int mt = 0; mt < T::RT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = mt * 16 + g + 8 * h;
      float m_all = kNegInf;
#pragma unroll
      for (int w = 0; w < T::WARPS; ++w) m_all = fmaxf(m_all, red_m[w * T::BR + r]);
      const float f = rows[mt][h].m == kNegInf ? 0.0f : softmax_exp2<true>(rows[mt][h].m - m_all);
      float* dst = red_o + (warp * T::BR + r) * T::OLD + 2 * tq;
#pragma unroll
      for (int n = 0; n < T::D / 8; ++n)
        *reinterpret_cast<float2*>(dst + n * 8) = make_float2(o[mt][n][2 * h] * f, o[mt][n][2 * h + 1] * f);
    }
  decode_sync<T, CONSUMERS_ONLY>();
}

// Row r's merged result after decode_merge_warps, or a merge into other places (o_rows): 8 columns from col of O
// (not yet divided by the sum), and the row's max and sum over every warp (log2 units).
template <class T, class Rows>
__device__ __forceinline__ void decode_merged_row_from(const float* red_ml, const Rows& o_rows, int r, int col,
                                                       float (&acc)[8], float& m_all, float& l_all) {
  const float* red_m = red_ml;
  const float* red_l = red_m + T::WARPS * T::BR;
  m_all = kNegInf;
#pragma unroll
  for (int w = 0; w < T::WARPS; ++w) m_all = fmaxf(m_all, red_m[w * T::BR + r]);
  l_all = 0.0f;
#pragma unroll
  for (int j = 0; j < 8; ++j) acc[j] = 0.0f;
#pragma unroll
  for (int w = 0; w < T::WARPS; ++w) {  // a fixed order: the result is the same bits every call
    const float mw = red_m[w * T::BR + r];
    l_all += mw == kNegInf ? 0.0f : red_l[w * T::BR + r] * softmax_exp2<true>(mw - m_all);
    const float4* src = reinterpret_cast<const float4*>(o_rows.at(w, r, 0) + o_rows.chunk(r, col));
    const float4 x0 = src[0], x1 = src[1];
    acc[0] += x0.x, acc[1] += x0.y, acc[2] += x0.z, acc[3] += x0.w;
    acc[4] += x1.x, acc[5] += x1.y, acc[6] += x1.z, acc[7] += x1.w;
  }
}

// decode_merged_row_from after decode_merge_warps.
template <class T>
__device__ __forceinline__ void decode_merged_row(const float* red, int r, int col, float (&acc)[8], float& m_all,
                                                  float& l_all) {
  float* red_o = const_cast<float*>(red) + 2 * T::WARPS * T::BR;
  decode_merged_row_from<T>(red, PaddedMergeRows<T>{red_o}, r, col, acc, m_all, l_all);
}

// 8 fp32 values as 8 Elems in one 16-byte store.
template <class Elem>
__device__ __forceinline__ void store8(Elem* dst, const float (&x)[8], float mul) {
  uint4 packed;
  packed.x = pack2<Elem>(x[0] * mul, x[1] * mul);
  packed.y = pack2<Elem>(x[2] * mul, x[3] * mul);
  packed.z = pack2<Elem>(x[4] * mul, x[5] * mul);
  packed.w = pack2<Elem>(x[6] * mul, x[7] * mul);
  *reinterpret_cast<uint4*>(dst) = packed;
}

// Whether this device lets a block have `bytes` of shared memory (its opt-in limit: 99 KB on sm_86
// and sm_89, 163 KB on sm_80, 227 KB on sm_90), read once a device. Returns a cudaError_t value.
inline int decode_smem_fits(size_t bytes, bool* fits) {
  static int limit[64] = {};
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return static_cast<int>(err);
  int here = device < 64 ? limit[device] : 0;
  if (here == 0) {
    err = cudaDeviceGetAttribute(&here, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (err != cudaSuccess) return static_cast<int>(err);
    if (device < 64) limit[device] = here;
  }
  *fits = bytes <= static_cast<size_t>(here);
  return 0;
}

// The stages a portable decode step's D-dimensional tile runs with on this device: 3, or 2 where the
// device's limit does not take 3 (D = 128 on sm_86 and sm_89). Returns a cudaError_t value.
template <class Elem, int D>
int decode_stages_fit(int* stages) {
  bool fits = true;
  if constexpr (D == 128) {
    if (int err = decode_smem_fits(DecodeTile<Elem, D, 2, 3>::smem_bytes(), &fits)) return err;
  }
  *stages = fits ? 3 : 2;
  return 0;
}

// --- Split keys (flash-decoding): CTAs over key ranges of one (sequence, K/V head), then a merge ----

// Where the CTAs of a split call leave their results: per (split, sequence, K/V head, packed row), O
// already divided by the split's own sum (fp32, D values) and the split's log-sum-exp (log2 units of
// the scaled scores); split s of a sequence covers keys [s * chunk, (s + 1) * chunk).
struct SplitPartials {
  float* o;
  float* lse;
  int splits;
  int chunk;  // keys a split, a multiple of the key tile
};

__host__ __device__ inline size_t split_row(const DecodeArgs& a, int split, int b, int kv, int r) {
  return ((static_cast<size_t>(split) * a.B + b) * a.H_kv + kv) * a.rows + r;
}

// The tokens a sequence may hold: S_max unpaged, the block table's pages paged.
inline int decode_capacity(const DecodeArgs& a) {
  return a.block_table != nullptr ? a.table_stride << a.page_shift : a.seq_tokens;
}

// One output row per 128 / (D / 8) threads' worth: the splits that hold keys of the sequence merged
// by their log-sum-exps in a fixed order (the same bits every call), 8 columns a thread.
// AFTER_PRIMARY: launched early (programmatic dependent launch, launch_combine_early), it first waits
// for the kernel before it to complete and its writes to be visible.
template <class Elem, int D, bool AFTER_PRIMARY = false>
__global__ void __launch_bounds__(128) decode_combine_splits(const DecodeArgs a, const SplitPartials p) {
  if constexpr (AFTER_PRIMARY) asm volatile("griddepcontrol.wait;\n" ::: "memory");
  constexpr int CHUNKS = D / 8;
  const int row = blockIdx.x * (128 / CHUNKS) + threadIdx.x / CHUNKS;  // (b, i, h) of the output
  const int col = (threadIdx.x % CHUNKS) * 8;
  if (row >= a.B * a.q_len * a.H) return;
  const int h = row % a.H, i = (row / a.H) % a.q_len, b = row / (a.H * a.q_len);
  const int kv = h / a.group, r = i * a.group + h % a.group;
  const int active = min(p.splits, ceil_div(a.cache_lens[b], p.chunk));
  float m = kNegInf;
  for (int s = 0; s < active; ++s) m = fmaxf(m, p.lse[split_row(a, s, b, kv, r)]);
  float acc[8] = {}, sum = 0.0f;
  for (int s = 0; s < active; ++s) {
    const size_t at = split_row(a, s, b, kv, r);
    const float lse = p.lse[at];
    const float w = lse == kNegInf ? 0.0f : exp2f(lse - m);
    sum += w;
    const float4* src = reinterpret_cast<const float4*>(p.o + at * D + col);
    const float4 x0 = src[0], x1 = src[1];
    acc[0] += w * x0.x, acc[1] += w * x0.y, acc[2] += w * x0.z, acc[3] += w * x0.w;
    acc[4] += w * x1.x, acc[5] += w * x1.y, acc[6] += w * x1.z, acc[7] += w * x1.w;
  }
  store8<Elem>(static_cast<Elem*>(a.o) + ((static_cast<size_t>(b) * a.q_len + i) * a.H + h) * D + col, acc, 1.0f / sum);
}

// Where decode_write_merged finds a row's merged result: the maxima and sums in red_ml, O where o_rows.at says.
template <class T, class Rows>
struct MergedRows {
  const float* red_ml;
  Rows o_rows;
  __device__ __forceinline__ void row(int r, int col, float (&acc)[8], float& m_all, float& l_all) const {
    decode_merged_row_from<T>(red_ml, o_rows, r, col, acc, m_all, l_all);
  }
};

// The CTA's rows once merged (Merged::row gives a row's 8 columns, max and sum), written out: divided by their
// sums into O where the call has one chunk a sequence (p.splits == 1), else as the chunk's partial result, O
// divided by the chunk's own sum and its log-sum-exp, for decode_combine_splits. THREADS: the threads that write.
template <class T, int THREADS = T::THREADS, class Merged>
__device__ __forceinline__ void decode_write_merged(const Merged& merged, const DecodeArgs& a,
                                                    const SplitPartials& p, int b, int kv, int row0, int split,
                                                    int tid) {
  constexpr int CHUNKS = T::D / 8;
  auto* out = static_cast<typename T::Elem*>(a.o);
  for (int c = tid; c < T::BR * CHUNKS; c += THREADS) {
    const int r = c / CHUNKS, col = (c % CHUNKS) * 8;
    if (row0 + r >= a.rows) continue;
    float acc[8], m_all, l_all;
    merged.row(r, col, acc, m_all, l_all);
    if (p.splits == 1) {
      store8<typename T::Elem>(out + query_offset<T::D>(a, b, kv, row0 + r) + col, acc, 1.0f / l_all);
      continue;
    }
    const size_t at = split_row(a, split, b, kv, row0 + r);
    // A row may see no key of a chunk that holds keys: with several new queries, query i sees keys below
    // n - q_len + 1 + i, and a chunk may start past that (its result then weighs 0 in the merge).
    const float inv = l_all > 0.0f ? 1.0f / l_all : 0.0f;
    float4* dst = reinterpret_cast<float4*>(p.o + at * T::D + col);
    dst[0] = make_float4(acc[0] * inv, acc[1] * inv, acc[2] * inv, acc[3] * inv);
    dst[1] = make_float4(acc[4] * inv, acc[5] * inv, acc[6] * inv, acc[7] * inv);
    if (col == 0) p.lse[at] = m_all + __log2f(l_all);
  }
}

// The CTA's rows after decode_merge_warps, written out (decode_write_merged).
template <class T, int THREADS = T::THREADS>
__device__ __forceinline__ void decode_write_rows(const float* red, const DecodeArgs& a, const SplitPartials& p,
                                                  int b, int kv, int row0, int split, int tid) {
  float* red_o = const_cast<float*>(red) + 2 * T::WARPS * T::BR;
  decode_write_merged<T, THREADS>(MergedRows<T, PaddedMergeRows<T>>{red, {red_o}}, a, p, b, kv, row0, split, tid);
}

// --- The split rule and the host side of a split call ---------------------------------------------

constexpr int kMinChunkKeys = 256;  // a chunk's keys at the least: the merge's traffic stays small

// One chunk where the (row block, sequence, K/V head) pairs fill a wave of CTAs (`wave`: SMs times
// CTAs an SM), else chunks for (about) two waves, each at least kMinChunkKeys keys, rounded to whole
// key tiles of BC, all of one size from the cache's capacity (a shorter sequence has fewer chunks).
inline void split_chunks(long long pairs, long long wave, int capacity, int BC, SplitPartials& p) {
  const long long wanted = pairs >= wave ? 1 : (2 * wave + pairs - 1) / pairs;
  const int most = capacity / kMinChunkKeys > 1 ? capacity / kMinChunkKeys : 1;
  const int splits = static_cast<int>(wanted < most ? wanted : most);
  p.chunk = ceil_div(ceil_div(capacity, splits), BC) * BC;
  p.splits = ceil_div(capacity, p.chunk);
}

// Step 42's rule, by wave efficiency (FlashAttention-2's heuristic, with the chunks of at least
// kMinChunkKeys keys kept): no split where the pairs fill 0.8 of a wave of CTAs; else the fewest
// chunks whose last wave is within 85 % of the best efficiency any count up to 128 reaches, the
// efficiency of s chunks being the share of CTA slots with work over the waves they take,
// (pairs x s / wave) / ceil(pairs x s / wave). Counts that give the same chunk size as one fewer
// (in whole key tiles) are passed over.
#ifndef FA_DECODE_SPLIT_WITHIN_PCT
#define FA_DECODE_SPLIT_WITHIN_PCT 85  // "within 85 % of the best": a knob for explorations (-D), not a switch
#endif
// The count of that rule over `wave` CTA slots, at least `least` (where `most` allows it).
inline int chunks_by_efficiency(long long pairs, long long wave, int tiles, int most, int least) {
  constexpr int MOST = 128;
  double efficiency[MOST + 1] = {};
  double best = 0.0;
  for (int s = 1; s <= most; ++s) {
    if (s > 1 && ceil_div(tiles, s) == ceil_div(tiles, s - 1)) continue;  // the same chunks as s - 1
    const double waves = static_cast<double>(pairs) * s / static_cast<double>(wave);
    const double whole = static_cast<double>(static_cast<long long>(waves) + (waves > static_cast<long long>(waves)));
    efficiency[s] = waves / whole;
    best = efficiency[s] > best ? efficiency[s] : best;
  }
  const int from = least < most ? least : most;
  for (int s = from; s <= most; ++s)
    if (efficiency[s] > 0.0 && efficiency[s] >= FA_DECODE_SPLIT_WITHIN_PCT / 100.0 * best) return s;
  return from;
}

inline int most_chunks(int capacity) {
  const int most = capacity / kMinChunkKeys;
  return most < 1 ? 1 : (most > 128 ? 128 : most);
}

inline void chunks_of(int capacity, int BC, int splits, SplitPartials& p) {
  p.chunk = ceil_div(ceil_div(capacity, splits), BC) * BC;
  p.splits = ceil_div(capacity, p.chunk);
}

inline void split_chunks_by_efficiency(long long pairs, long long wave, int capacity, int BC, SplitPartials& p) {
  const int most = most_chunks(capacity);
  const bool split = 10 * pairs < 8 * wave && most > 1;
  const int splits = split ? chunks_by_efficiency(pairs, wave, ceil_div(capacity, BC), most, 1) : 1;
  chunks_of(capacity, BC, splits, p);
}

// Step 54's rule: where step 42's splits (the pairs under 0.8 of `wave`, SMs x CTAs an SM), the count is
// reckoned over one CTA an SM (`sms` slots: one CTA's copy-engine ring streams an SM's share of the HBM
// bandwidth, and each chunk more is a partial O to write and merge), at least 2 (a call of about one pair
// an SM still halves its longest sequence's chunk).
inline void split_chunks_one_cta_an_sm(long long pairs, long long wave, long long sms, int capacity, int BC,
                                       SplitPartials& p) {
  const int most = most_chunks(capacity);
  const bool split = 10 * pairs < 8 * wave && most > 1;
  const int splits = split ? chunks_by_efficiency(pairs, sms, ceil_div(capacity, BC), most, 2) : 1;
  chunks_of(capacity, BC, splits, p);
}

// Step 55's choice for a call of more than 32 packed query rows a K/V head (Falcon-7B's 71 on one): the 16-row
// TMA tile, ceil(rows / 16) row blocks a (sequence, K/V head) (`pairs`), each block reading the head's keys
// (the blocks of one head meet in L2), where step 54's rule over those pairs (`wave`: SMs x the 16-row tile's
// CTAs an SM) leaves chunks of at most kRowBlocksMostKeys keys; else the row warps (step 46), whose finer split
// wins where each CTA would otherwise walk a long chunk one tile after another. `p` is the row blocks' plan
// either way.
constexpr int kRowBlocksMostKeys = 2048;
inline bool wide_group_takes_row_blocks(long long pairs, long long wave, long long sms, int capacity, int BC,
                                        SplitPartials& p) {
  split_chunks_one_cta_an_sm(pairs, wave, sms, capacity, BC, p);
  return p.chunk <= kRowBlocksMostKeys;
}

// Step 56's choice for the same calls: the row blocks with the most chunks whose CTAs fit one wave of the 16-row
// tile (pairs x chunks <= `wave`, SMs x its CTAs an SM; at least kMinChunkKeys keys a chunk), where one chunk a
// block fits and the chunks are at most kRowBlocksMostKeys keys; else the row warps. Step 55 counted the chunks
// over one CTA an SM (step 54's rule), which can put more CTAs than a wave holds: a second, partial round of short
// CTAs (0.836x at (32, 71, 1, 64, 1024), data/explorations/2026-12-02-decode-row-block-chunks). The launcher
// cannot see the lengths (on the GPU), so a mixed batch, whose short sequences leave some CTAs without keys, is
// counted as if every sequence were full. `p` is the row blocks' plan either way.
inline bool wide_group_fills_one_wave(long long pairs, long long wave, int capacity, int BC, SplitPartials& p) {
  const long long fit = pairs > 0 ? wave / pairs : 0;
  if (fit < 1) {
    chunks_of(capacity, BC, 1, p);
    return false;
  }
  const int most = most_chunks(capacity);
  chunks_of(capacity, BC, fit < most ? static_cast<int>(fit) : most, p);
  return p.chunk <= kRowBlocksMostKeys;
}

// A split call's partial results in the caller's workspace (O, then the log-sum-exps), or a
// cudaError_t value where it has none or too little (never written past).
inline int bind_workspace(const DecodeArgs& a, SplitPartials& p, int D, void* workspace, long long bytes) {
  if (p.splits == 1) return 0;
  const long long partial_rows = static_cast<long long>(p.splits) * a.B * a.H_kv * a.rows;
  if (workspace == nullptr || bytes < partial_rows * (D + 1) * static_cast<long long>(sizeof(float)))
    return static_cast<int>(cudaErrorInvalidValue);
  p.o = static_cast<float*>(workspace);
  p.lse = p.o + partial_rows * D;
  return 0;
}

// The workspace a split call needs: splits x B x H x q_len rows of D + 1 floats (0 for one chunk).
inline long long workspace_bytes_for(const SplitPartials& p, int B, int q_len, int H, int D) {
  return p.splits > 1 ? static_cast<long long>(p.splits) * B * H * q_len * (D + 1) * sizeof(float) : 0;
}

// The second kernel of a split call (none for one chunk).
template <class Elem, int D>
void launch_combine(const DecodeArgs& a, const SplitPartials& p, cudaStream_t stream) {
  if (p.splits == 1) return;
  const int out_rows = a.B * a.q_len * a.H, per_block = 128 / (D / 8);
  decode_combine_splits<Elem, D><<<ceil_div(out_rows, per_block), 128, 0, stream>>>(a, p);
}

// A merge kernel of a split call launched as the main kernel's programmatic dependent (sm_90): its CTAs
// may be scheduled once every CTA of the main kernel has signalled (griddepcontrol.launch_dependents), and
// wait on the device for it to complete, so the launch's latency hides behind the main kernel's last wave.
// Returns a cudaError_t value.
template <class Merge>
int launch_after_main(Merge merge, unsigned blocks, unsigned threads, const DecodeArgs& a, const SplitPartials& p,
                      cudaStream_t stream) {
  cudaLaunchAttribute early{};
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.stream = stream;
  config.attrs = &early;
  config.numAttrs = 1;
  return static_cast<int>(cudaLaunchKernelEx(&config, merge, a, p));
}

// The second kernel of a split call (decode_combine_splits) launched early (launch_after_main).
template <class Elem, int D>
int launch_combine_early(const DecodeArgs& a, const SplitPartials& p, cudaStream_t stream) {
  if (p.splits == 1) return 0;
  const int out_rows = a.B * a.q_len * a.H, per_block = 128 / (D / 8);
  return launch_after_main(decode_combine_splits<Elem, D, true>, ceil_div(out_rows, per_block), 128, a, p, stream);
}

// The merge with the splits read side by side (step 47 on): one CTA of kMergeThreads an output row, D / 4
// threads on a split's row (4 floats each), so the CTA holds kMergeThreads / (D / 4) "slots", slot j
// taking splits j, j + slots, ... with its loads in flight together; every warp finds the splits' max
// log-sum-exp and their weights' sum itself (lane-parallel reads of the log-sum-exps), and the slots'
// sums meet in shared memory in a fixed order (the same bits every call). Launched early, as
// launch_combine_early's, it first waits for the main kernel.
constexpr int kMergeThreads = 128;
template <class Elem, int D>
__global__ void __launch_bounds__(kMergeThreads) decode_merge_splits_side_by_side(const DecodeArgs a,
                                                                                  const SplitPartials p) {
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  constexpr int LANES = D / 4, SLOTS = kMergeThreads / LANES;
  __shared__ float4 slot_sum[SLOTS][LANES];
  const int row = blockIdx.x;  // (b, i, h) of the output
  const int h = row % a.H, i = (row / a.H) % a.q_len, b = row / (a.H * a.q_len);
  const int kv = h / a.group, r = i * a.group + h % a.group;
  const int active = min(p.splits, ceil_div(a.cache_lens[b], p.chunk));
  const int lane = threadIdx.x % 32, slot = threadIdx.x / LANES, col = (threadIdx.x % LANES) * 4;
  float m = kNegInf;
  for (int s = lane; s < active; s += 32) m = fmaxf(m, p.lse[split_row(a, s, b, kv, r)]);
  m = group_max<32>(m);
  float sum = 0.0f;
  for (int s = lane; s < active; s += 32) {
    const float lse = p.lse[split_row(a, s, b, kv, r)];
    sum += lse == kNegInf ? 0.0f : exp2f(lse - m);
  }
  sum = group_sum<32>(sum);
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 4
  for (int s = slot; s < active; s += SLOTS) {
    const size_t at = split_row(a, s, b, kv, r);
    const float lse = p.lse[at];
    const float w = lse == kNegInf ? 0.0f : exp2f(lse - m);
    const float4 x = *reinterpret_cast<const float4*>(p.o + at * D + col);
    acc.x += w * x.x, acc.y += w * x.y, acc.z += w * x.z, acc.w += w * x.w;
  }
  slot_sum[slot][threadIdx.x % LANES] = acc;
  __syncthreads();
  if (slot != 0) return;
  float4 total = slot_sum[0][threadIdx.x];
  for (int j = 1; j < SLOTS; ++j) {
    const float4 x = slot_sum[j][threadIdx.x];
    total.x += x.x, total.y += x.y, total.z += x.z, total.w += x.w;
  }
  const float inv = 1.0f / sum;
  Elem* dst = static_cast<Elem*>(a.o) + ((static_cast<size_t>(b) * a.q_len + i) * a.H + h) * D + col;
  *reinterpret_cast<uint2*>(dst) = make_uint2(pack2<Elem>(total.x * inv, total.y * inv),
                                              pack2<Elem>(total.z * inv, total.w * inv));
}

// decode_merge_splits_side_by_side launched early (launch_after_main), one CTA an output row.
template <class Elem, int D>
int launch_merge_side_by_side(const DecodeArgs& a, const SplitPartials& p, cudaStream_t stream) {
  if (p.splits == 1) return 0;
  return launch_after_main(decode_merge_splits_side_by_side<Elem, D>, a.B * a.q_len * a.H, kMergeThreads, a, p,
                           stream);
}

// The host side of a decode call: its arguments checked and packed, or a cudaError_t value.
inline int decode_args(DecodeArgs& a, const void* q, const void* k, const void* v, void* o, const int* cache_lens,
                       const int* block_table, int B, int q_len, int H, int H_kv, int cache_dim0, int cache_dim1,
                       int table_stride, float scale) {
  if (B < 1 || q_len < 1 || q_len > 8 || H < 1 || H_kv < 1 || H % H_kv || cache_dim0 < 1 || cache_dim1 < 1 || B > 65535 ||
      H_kv > 65535)
    return static_cast<int>(cudaErrorInvalidValue);
  int shift = 0;
  if (block_table != nullptr) {  // cache_dim1 is the page size, a power of two
    while ((1 << shift) < cache_dim1) ++shift;
    if ((1 << shift) != cache_dim1 || table_stride < 1) return static_cast<int>(cudaErrorInvalidValue);
  }
  a = DecodeArgs{q, k, v, o, cache_lens, block_table, B, q_len, H, H_kv, H / H_kv, q_len * (H / H_kv),
                 table_stride, shift, cache_dim1, cache_dim0, scale};
  return 0;
}

}  // namespace
}  // namespace fa

// The C ABI of a decode step (loaded by lab.kernels.decode_attention with ctypes):
//   fa_decode          launches on `stream`: q, k_cache, v_cache, out, cache_lens, block_table (NULL:
//                      unpaged), B, q_len, H, H_kv, D, cache_dim0 (B unpaged, the pages paged), cache_dim1
//                      (S_max unpaged, the page size paged),
//                      table_stride (block_table's row length), scale, dtype (0 fp16, 1 bf16), and a
//                      workspace of workspace_bytes; returns a cudaError_t value (0 = success)
//   fa_decode_workspace_bytes  the workspace a call needs (B, q_len, H, H_kv, D, capacity: the tokens a
//                      sequence may hold)
//   fa_build_key, fa_smem_bytes, fa_threads, fa_tile_rows, fa_error_name, fa_dtypes, fa_grouped_kv as
//                      the prefill steps export them (fa/common.cuh), for the build's records.
// LAUNCH<Elem, D>::run(const fa::DecodeArgs&, void* workspace, long long workspace_bytes, cudaStream_t)
// and LAUNCH<half, D>::workspace_bytes(B, q_len, H, H_kv, capacity); TILE<D> describes the widest tile.
#define FA_EXPORT_DECODE_VARIANT(LAUNCH, TILE)                                                        \
  extern "C" int fa_decode(const void* q, const void* k, const void* v, void* o, const int* cache_lens, \
                           const int* block_table, int B, int q_len, int H, int H_kv, int D,          \
                           int cache_dim0, int cache_dim1, int table_stride, float scale, int dtype, void* workspace, \
                           long long workspace_bytes, void* stream) {                                 \
    fa::DecodeArgs a;                                                                                 \
    if (int err = fa::decode_args(a, q, k, v, o, cache_lens, block_table, B, q_len, H, H_kv,         \
                                  cache_dim0, cache_dim1, table_stride, scale))                       \
      return err;                                                                                     \
    auto st = static_cast<cudaStream_t>(stream);                                                      \
    if (dtype == fa::dtype_code<half> && D == 64) return LAUNCH<half, 64>::run(a, workspace, workspace_bytes, st); \
    if (dtype == fa::dtype_code<half> && D == 128) return LAUNCH<half, 128>::run(a, workspace, workspace_bytes, st); \
    if (dtype == fa::dtype_code<__nv_bfloat16> && D == 64)                                           \
      return LAUNCH<__nv_bfloat16, 64>::run(a, workspace, workspace_bytes, st);                       \
    if (dtype == fa::dtype_code<__nv_bfloat16> && D == 128)                                          \
      return LAUNCH<__nv_bfloat16, 128>::run(a, workspace, workspace_bytes, st);                      \
    return static_cast<int>(cudaErrorInvalidValue);                                                   \
  }                                                                                                   \
  extern "C" long long fa_decode_workspace_bytes(int B, int q_len, int H, int H_kv, int D, int capacity) { \
    if (D == 64) return LAUNCH<half, 64>::workspace_bytes(B, q_len, H, H_kv, capacity);               \
    if (D == 128) return LAUNCH<half, 128>::workspace_bytes(B, q_len, H, H_kv, capacity);             \
    return -1;                                                                                        \
  }                                                                                                   \
  extern "C" int fa_dtypes() { return 1 << fa::dtype_code<half> | 1 << fa::dtype_code<__nv_bfloat16>; } \
  extern "C" int fa_grouped_kv() { return 1; }                                                        \
  FA_EXPORT_VARIANT_INFO(TILE)
