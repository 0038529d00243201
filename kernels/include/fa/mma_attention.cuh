// Tensor-core math through raw mma.sync m16n8k16 with ldmatrix, the FlashAttention-2 recipe:
// S and P never leave registers. The m16n8 accumulator layout of S (thread holds rows g and
// g + 8, columns 2t and 2t + 1 of each 8-column tile; g = lane / 4, t = lane % 4) is exactly the
// A-operand layout of the next mma, so P feeds P V without a trip through shared memory, and a
// row's max and sum need only the 4 lanes of a quad.
#pragma once

#include "fa/common.cuh"
#include "fa/softmax.cuh"

namespace fa {

// M_TILES: 16-row m-tiles per consumer warp (the warp's rows are 16 * M_TILES; BR = 64 * M_TILES).
// PRODUCER_WARPS = 0: no producer warp, the consumers copy K/V themselves (see issue_kv_tile).
template <int D_, int KV_STAGES_ = 2, int PRODUCER_WARPS_ = 1, bool ASYNC_ARRIVE_ = false, int M_TILES_ = 1,
          int CTAS_PER_SM_ = 1, int BC_ = 64, class Elem_ = half>
struct MmaTile {
  using Elem = Elem_;  // half or __nv_bfloat16: Q, K, V, O and P
  static constexpr int D = D_;
  static constexpr int M_TILES = M_TILES_;
  static constexpr int CONSUMER_WARPS = 4;
  static constexpr int WARP_ROWS = 16 * M_TILES;
  static constexpr int BR = CONSUMER_WARPS * WARP_ROWS;
  static constexpr int BC = BC_;  // S stays in registers, so D = 128 can afford 64 keys a tile
  static constexpr int CONSUMER_THREADS = 32 * CONSUMER_WARPS;
  static constexpr int PRODUCER_WARPS = PRODUCER_WARPS_;
  static constexpr int THREADS = CONSUMER_THREADS + 32 * PRODUCER_WARPS;
  static constexpr int KV_STAGES = KV_STAGES_;
  static constexpr bool ASYNC_ARRIVE = ASYNC_ARRIVE_;  // see produce_kv_tiles
  static constexpr int CTAS_PER_SM = CTAS_PER_SM_;     // the launch bound's minimum blocks per SM
  static constexpr int PAD = 8;       // 16 bytes: ldmatrix's 8 row addresses hit 8 different bank quads
  static constexpr int LD = D + PAD;  // Q/K/V row stride (halves)

  static constexpr size_t Q_HALVES = BR * LD;
  static constexpr size_t KV_HALVES = BC * LD;
  static constexpr size_t smem_bytes() { return (Q_HALVES + 2 * KV_STAGES * KV_HALVES) * sizeof(Elem); }

  using Smem = QkvCarving<Elem, Q_HALVES, KV_HALVES, KV_STAGES>;
};

// ldmatrix moves 16-bit elements whatever their type.
template <class Elem>
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const Elem* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p))));
}

template <class Elem>
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const Elem* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p))));
}

// c += a (16x16, row) * b (16x8, col), fp16 (or bf16) in, fp32 accumulate.
#define FA_MMA_16816(TYPE)                                                                         \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE                              \
               ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"           \
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                  \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))

template <class Elem = half>
__device__ __forceinline__ void mma_16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  if constexpr (is_bf16<Elem>) FA_MMA_16816("bf16");
  else FA_MMA_16816("f16");
}

// The two products one ldmatrix.x4's B fragments (b[0..1], b[2..3]) feed: the k pair, two 16-wide steps of the
// reduced dimension into one accumulator (A fragments a0 and a1); the n pair, two adjacent 8-column tiles of the
// output (accumulators c0 and c1) from one A fragment.
template <class Elem = half>
__device__ __forceinline__ void mma_16816_k_pair(float (&c)[4], const unsigned (&a0)[4], const unsigned (&a1)[4],
                                                 const unsigned (&b)[4]) {
  mma_16816<Elem>(c, a0, b[0], b[1]);
  mma_16816<Elem>(c, a1, b[2], b[3]);
}
template <class Elem = half>
__device__ __forceinline__ void mma_16816_n_pair(float (&c0)[4], float (&c1)[4], const unsigned (&a)[4],
                                                 const unsigned (&b)[4]) {
  mma_16816<Elem>(c0, a, b[0], b[1]);
  mma_16816<Elem>(c1, a, b[2], b[3]);
}

__device__ __forceinline__ unsigned pack_half2(float lo, float hi) { return pack2<half>(lo, hi); }

// The warp's 16 query rows as A fragments, one per 16 columns of D, loaded once.
template <class T>
__device__ __forceinline__ void load_q_fragments(unsigned (&qa)[T::D / 16][4], const ElemOf<T>* q_w, int lane) {
#pragma unroll
  for (int kk = 0; kk < T::D / 16; ++kk)
    ldmatrix_x4(qa[kk], q_w + (lane % 16) * T::LD + kk * 16 + (lane / 16) * 8);
}

// S (16 x BC) = Q_w K^T into BC/8 accumulator tiles. One ldmatrix.x4 gives an 8-key tile's B
// fragments for two 16-wide steps of D.
template <class T>
__device__ __forceinline__ void mma_scores(float (&s)[T::BC / 8][4], const unsigned (&qa)[T::D / 16][4],
                                           const ElemOf<T>* sK, int lane) {
#pragma unroll
  for (int n = 0; n < T::BC / 8; ++n) {
    s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < T::D / 16; kk += 2) {
      unsigned b[4];
      ldmatrix_x4(b, sK + (n * 8 + lane % 8) * T::LD + kk * 16 + (lane / 8) * 8);
      mma_16816_k_pair<ElemOf<T>>(s[n], qa[kk], qa[kk + 1], b);
    }
  }
}

// exp2 for the softmax. exp2f is ex2.approx.f32, which ptxas wraps in a fix-up for subnormal
// results (a compare and two predicated multiplies around MUFU.EX2); the .ftz form is the bare
// MUFU.EX2 and flushes results below 2^-126 to zero, far below fp16's smallest P (2^-24).
template <bool FTZ>
__device__ __forceinline__ float softmax_exp2(float x) {
  if constexpr (FTZ) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
  } else {
    return exp2f(x);
  }
}

// Online softmax on the register tile, base-2 with the scale folded into one multiply.
// Rows g and g + 8 of the warp's 16 (g = lane / 4); a row lives in the 4 lanes of a quad. The
// running sum stays per thread (a partial over its columns) and is summed over the quad once,
// at the end: alpha is the same in all 4 lanes, so the partials rescale alike.
// MASK = false skips the visibility test, for tiles wholly inside the sequence and (causal)
// wholly at or below the diagonal. FTZ_EXP2: see softmax_exp2. ROW_LIMIT (step 33's three CTAs
// per SM) writes the mask as one bound per row: key kv0 + 2t + (8n + c) is visible when 8n + c is
// below min(S, query + 1) - kv0 - 2t, so each element compares a constant with that bound; the
// default form computes each element's key index, which ptxas keeps in registers for both rows
// (72 bytes spilled at the 136 registers a consumer has with three CTAs per SM). FINITE_MAX (step 58)
// acts on unmasked tiles only (MASK = false), where every score is finite: the row's max starts from
// its first score instead of -inf, and the exponent's base takes no -inf guard (the running max is
// finite), an FSETP, an FSEL and an FMNMX fewer for each of a thread's two rows. LAZY_MAX (step 61,
// FlashAttention-4's conditional rescale): the running max moves only where the tile raises it by more
// than 8 in base-2 units of the scaled scores, so that against a stale max the exponentials stay below
// 2^8 (fp16 and bf16 hold them, the sum's fp32 too); where it does not move alpha is exactly 1, and the
// caller may skip O's rescale. SHIFTED_MAX (step 62, with LAZY_MAX) writes that rule as one FMNMX: the
// max becomes max(m, tile max - 2^8's worth), alpha exp2((m_old - m) * scale), exactly 1 where m stays;
// no compare and select, so ptxas interleaves the maxima with the exponentials. Kept from a row's first
// tile taken eagerly (the caller's), m then moves only where a tile passes it by 2^8, and then to 2^8
// below that tile's max (P stays below 2^8). m must be finite before (a row's first tile holds a visible
// key): -inf - -inf would make alpha NaN. Off by default, so that the earlier steps compile as before.
template <class T, bool MASK = true, bool FTZ_EXP2 = false, bool ROW_LIMIT = false, bool FINITE_MAX = false,
          bool LAZY_MAX = false, bool SHIFTED_MAX = false>
__device__ __forceinline__ void mma_online_softmax(float (&s)[T::BC / 8][4], RowState (&rows)[2],
                                                   float (&alpha)[2], const AttnShape& shape, int query0,
                                                   int kv0, int lane, float scale_log2) {
  const int g = lane / 4, t = lane % 4;
  constexpr bool SHIFTED = LAZY_MAX && SHIFTED_MAX;
  const float max_shift = 8.0f / scale_log2;  // SHIFTED: 2^8 in the exponent's base-2 units, in the scores' units
#pragma unroll
  for (int half_row = 0; half_row < 2; ++half_row) {
    const int query = query0 + g + 8 * half_row;
    const int limit = min(shape.S, shape.causal ? query + 1 : shape.S) - kv0 - 2 * t;  // ROW_LIMIT only
    constexpr bool FINITE = FINITE_MAX && !MASK;
    float tile_max = FINITE ? s[0][2 * half_row] : kNegInf;
#pragma unroll
    for (int n = 0; n < T::BC / 8; ++n)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        if (FINITE && n == 0 && c == 0) continue;  // the max's start
        float& x = s[n][2 * half_row + c];
        if constexpr (ROW_LIMIT) {
          if (MASK && n * 8 + c >= limit) x = kNegInf;
        } else {
          const int key = kv0 + n * 8 + 2 * t + c;
          if (MASK && (key >= shape.S || (shape.causal && key > query))) x = kNegInf;
        }
        tile_max = fmaxf(tile_max, x);
      }
    RowState& row = rows[half_row];
    float m_new = SHIFTED ? fmaxf(row.m, group_max<4>(tile_max) - max_shift) : fmaxf(row.m, group_max<4>(tile_max));
    bool moved = true;
    if constexpr (LAZY_MAX && !SHIFTED) {  // -inf + 8 is -inf: a row's first finite max always moves
      moved = m_new * scale_log2 > row.m * scale_log2 + 8.0f;
      m_new = moved ? m_new : row.m;
    }
    const float base = FINITE ? m_new * scale_log2 : m_new == kNegInf ? 0.0f : m_new * scale_log2;
    alpha[half_row] = SHIFTED ? softmax_exp2<FTZ_EXP2>((row.m - m_new) * scale_log2)
                              : moved ? softmax_exp2<FTZ_EXP2>(row.m * scale_log2 - base) : 1.0f;
    float partial = 0.0f;
#pragma unroll
    for (int n = 0; n < T::BC / 8; ++n)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        float& x = s[n][2 * half_row + c];
        x = softmax_exp2<FTZ_EXP2>(fmaf(x, scale_log2, -base));
        partial += x;
      }
    row.l = row.l * alpha[half_row] + partial;
    row.m = m_new;
  }
}

// O (16 x D, D/8 accumulator tiles) = alpha * O + P V, P taken straight from the S registers.
template <class T>
__device__ __forceinline__ void mma_accumulate_pv(float (&o)[T::D / 8][4], const float (&alpha)[2],
                                                  const float (&p)[T::BC / 8][4], const ElemOf<T>* sV, int lane) {
#pragma unroll
  for (int n = 0; n < T::D / 8; ++n) {
    o[n][0] *= alpha[0];
    o[n][1] *= alpha[0];
    o[n][2] *= alpha[1];
    o[n][3] *= alpha[1];
  }
#pragma unroll
  for (int kk = 0; kk < T::BC / 16; ++kk) {
    const unsigned pa[4] = {pack2<ElemOf<T>>(p[2 * kk][0], p[2 * kk][1]), pack2<ElemOf<T>>(p[2 * kk][2], p[2 * kk][3]),
                            pack2<ElemOf<T>>(p[2 * kk + 1][0], p[2 * kk + 1][1]),
                            pack2<ElemOf<T>>(p[2 * kk + 1][2], p[2 * kk + 1][3])};
#pragma unroll
    for (int dn = 0; dn < T::D / 16; ++dn) {
      unsigned b[4];
      ldmatrix_x4_trans(b, sV + (kk * 16 + lane % 16) * T::LD + dn * 16 + (lane / 16) * 8);
      mma_16816_n_pair<ElemOf<T>>(o[2 * dn], o[2 * dn + 1], pa, b);
    }
  }
}

// O *= alpha, row by row (rows g and g + 8 of the warp's 16).
template <int N>
__device__ __forceinline__ void rescale_rows(float (&o)[N][4], const float (&alpha)[2]) {
#pragma unroll
  for (int n = 0; n < N; ++n) {
    o[n][0] *= alpha[0];
    o[n][1] *= alpha[0];
    o[n][2] *= alpha[1];
    o[n][3] *= alpha[1];
  }
}

// P (16 x BC) as fp16 (bf16) A fragments, one per 16 keys: the S accumulator layout is the A layout.
template <class T>
__device__ __forceinline__ void pack_p_fragments(unsigned (&p)[T::BC / 16][4], const float (&s)[T::BC / 8][4]) {
#pragma unroll
  for (int kk = 0; kk < T::BC / 16; ++kk) {
    p[kk][0] = pack2<ElemOf<T>>(s[2 * kk][0], s[2 * kk][1]);
    p[kk][1] = pack2<ElemOf<T>>(s[2 * kk][2], s[2 * kk][3]);
    p[kk][2] = pack2<ElemOf<T>>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    p[kk][3] = pack2<ElemOf<T>>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
  }
}

// O / l straight from registers: each thread writes half2 pairs of rows g and g + 8.
template <class T>
__device__ __forceinline__ void mma_store_output(ElemOf<T>* out_w, const float (&o)[T::D / 8][4], RowState (&rows)[2],
                                                 int rows_valid, int lane) {
  const int t = lane % 4;
  for_each_output_pair<T>(o, rows, rows_valid, lane, [&](int r, int n, unsigned pair) {
    *reinterpret_cast<unsigned*>(out_w + r * T::D + n * 8 + 2 * t) = pair;
  });
}

// --- Several 16-row m-tiles per warp (M_TILES > 1) ---------------------------------------------
// Every K or V fragment a warp loads with ldmatrix feeds one mma per m-tile, so shared-memory
// reads per mma fall by the number of m-tiles.

// S[mt] set to zero before the first mma adds to it.
template <class T>
__device__ __forceinline__ void zero_scores(float (&s)[T::M_TILES][T::BC / 8][4]) {
#pragma unroll
  for (int mt = 0; mt < T::M_TILES; ++mt)
#pragma unroll
    for (int n = 0; n < T::BC / 8; ++n) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.0f;
}

// S[mt] (16 x BC each) = Q_w[mt] K^T. q_frag(a, mt, kk) yields Q's A fragment for m-tile mt and
// the 16 columns kk of D, from registers or from shared memory.
template <class T, class QFrag>
__device__ __forceinline__ void mma_scores_tiles(float (&s)[T::M_TILES][T::BC / 8][4], QFrag q_frag,
                                                 const ElemOf<T>* sK, int lane) {
  zero_scores<T>(s);
#pragma unroll
  for (int kk = 0; kk < T::D / 16; kk += 2) {
    unsigned a[T::M_TILES][2][4];
#pragma unroll
    for (int mt = 0; mt < T::M_TILES; ++mt) {
      q_frag(a[mt][0], mt, kk);
      q_frag(a[mt][1], mt, kk + 1);
    }
#pragma unroll
    for (int n = 0; n < T::BC / 8; ++n) {
      unsigned b[4];
      ldmatrix_x4(b, sK + (n * 8 + lane % 8) * T::LD + kk * 16 + (lane / 8) * 8);
#pragma unroll
      for (int mt = 0; mt < T::M_TILES; ++mt) mma_16816_k_pair<ElemOf<T>>(s[mt][n], a[mt][0], a[mt][1], b);
    }
  }
}

// The same product with the loops turned: 16 columns of D at a time (kk outer), and one
// ldmatrix.x4 giving the B fragments of two 8-key tiles at that kk. Consecutive mma write
// different accumulators; an accumulator's next mma comes M_TILES * BC / 8 mma later, instead of
// right behind the previous one as in mma_scores_tiles (kk inner), where each waits out the
// previous one's fixed latency.
template <class T, class QFrag>
__device__ __forceinline__ void mma_scores_tiles_kk_outer(float (&s)[T::M_TILES][T::BC / 8][4], QFrag q_frag,
                                                          const ElemOf<T>* sK, int lane) {
  zero_scores<T>(s);
#pragma unroll
  for (int kk = 0; kk < T::D / 16; ++kk) {
    unsigned a[T::M_TILES][4];
#pragma unroll
    for (int mt = 0; mt < T::M_TILES; ++mt) q_frag(a[mt], mt, kk);
#pragma unroll
    for (int n = 0; n < T::BC / 8; n += 2) {
      unsigned b[4];  // keys n*8.. and (n+1)*8.., each at columns kk*16 + 0..7 and + 8..15
      ldmatrix_x4(b, sK + (n * 8 + (lane / 16) * 8 + lane % 8) * T::LD + kk * 16 + ((lane / 8) % 2) * 8);
#pragma unroll
      for (int mt = 0; mt < T::M_TILES; ++mt) mma_16816_n_pair<ElemOf<T>>(s[mt][n], s[mt][n + 1], a[mt], b);
    }
  }
}

// Lazy rescaling (as FlashAttention-4 does): a row keeps its running max until a tile raises it by
// more than LAZY_RESCALE_LOG2 (log2 units: a factor 2^8 = 256). Until then P = exp2(s - m_stale)
// may reach 256, harmless in fp16 and in the fp32 sums, and neither O nor l needs rescaling: the
// epilogue divides by an l built with the same stale max. The decision is the warp's (if any of its
// rows needs a new max, all take theirs), so the O rescale is skipped warp-uniformly. Returns
// whether this warp rescales O by alpha for this tile.
constexpr float LAZY_RESCALE_LOG2 = 8.0f;

template <class T, bool MASK, bool FTZ_EXP2>
__device__ __forceinline__ bool mma_online_softmax_lazy(float (&s)[T::M_TILES][T::BC / 8][4],
                                                        RowState (&rows)[T::M_TILES][2],
                                                        float (&alpha)[T::M_TILES][2], const AttnShape& shape,
                                                        int query0, int kv0, int lane, float scale_log2) {
  const int g = lane / 4, t = lane % 4;
  float tile_max[T::M_TILES][2];
  bool raise = false;
#pragma unroll
  for (int mt = 0; mt < T::M_TILES; ++mt)
#pragma unroll
    for (int half_row = 0; half_row < 2; ++half_row) {
      const int query = query0 + mt * 16 + g + 8 * half_row;
      float mx = kNegInf;
#pragma unroll
      for (int n = 0; n < T::BC / 8; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int key = kv0 + n * 8 + 2 * t + c;
          float& x = s[mt][n][2 * half_row + c];
          if (MASK && (key >= shape.S || (shape.causal && key > query))) x = kNegInf;
          mx = fmaxf(mx, x);
        }
      mx = group_max<4>(mx);
      tile_max[mt][half_row] = mx;
      const float m = rows[mt][half_row].m;
      raise |= m == kNegInf ? mx != kNegInf : (mx - m) * scale_log2 > LAZY_RESCALE_LOG2;
    }
  const bool rescale = __any_sync(0xffffffffu, raise);
#pragma unroll
  for (int mt = 0; mt < T::M_TILES; ++mt)
#pragma unroll
    for (int half_row = 0; half_row < 2; ++half_row) {
      RowState& row = rows[mt][half_row];
      if (rescale) {
        const float m_new = fmaxf(row.m, tile_max[mt][half_row]);
        alpha[mt][half_row] = softmax_exp2<FTZ_EXP2>((row.m - m_new) * scale_log2);  // 0 on the first tile
        row.l *= alpha[mt][half_row];
        row.m = m_new;
      }
      const float base = row.m == kNegInf ? 0.0f : row.m * scale_log2;
      float partial = 0.0f;
#pragma unroll
      for (int n = 0; n < T::BC / 8; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          float& x = s[mt][n][2 * half_row + c];
          x = softmax_exp2<FTZ_EXP2>(fmaf(x, scale_log2, -base));
          partial += x;
        }
      row.l += partial;
    }
  return rescale;
}

// O[mt] = alpha[mt] * O[mt] + P[mt] V, P straight from the S registers.
template <class T>
__device__ __forceinline__ void mma_accumulate_pv_tiles(float (&o)[T::M_TILES][T::D / 8][4],
                                                        const float (&alpha)[T::M_TILES][2],
                                                        const float (&p)[T::M_TILES][T::BC / 8][4], const ElemOf<T>* sV,
                                                        int lane, bool rescale = true) {
  if (rescale)
#pragma unroll
    for (int mt = 0; mt < T::M_TILES; ++mt) rescale_rows(o[mt], alpha[mt]);
#pragma unroll
  for (int kk = 0; kk < T::BC / 16; ++kk) {
    unsigned pa[T::M_TILES][4];
#pragma unroll
    for (int mt = 0; mt < T::M_TILES; ++mt) {
      pa[mt][0] = pack2<ElemOf<T>>(p[mt][2 * kk][0], p[mt][2 * kk][1]);
      pa[mt][1] = pack2<ElemOf<T>>(p[mt][2 * kk][2], p[mt][2 * kk][3]);
      pa[mt][2] = pack2<ElemOf<T>>(p[mt][2 * kk + 1][0], p[mt][2 * kk + 1][1]);
      pa[mt][3] = pack2<ElemOf<T>>(p[mt][2 * kk + 1][2], p[mt][2 * kk + 1][3]);
    }
#pragma unroll
    for (int dn = 0; dn < T::D / 16; ++dn) {
      unsigned b[4];
      ldmatrix_x4_trans(b, sV + (kk * 16 + lane % 16) * T::LD + dn * 16 + (lane / 16) * 8);
#pragma unroll
      for (int mt = 0; mt < T::M_TILES; ++mt) mma_16816_n_pair<ElemOf<T>>(o[mt][2 * dn], o[mt][2 * dn + 1], pa[mt], b);
    }
  }
}

}  // namespace fa
