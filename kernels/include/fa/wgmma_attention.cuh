// Hopper warpgroup MMA (sm_90a only): wgmma.mma_async reads its B operand (and, for Q K^T, its
// A operand) straight from shared memory through a matrix descriptor, 64 query rows per
// warpgroup of 4 warps, so no ldmatrix and no per-warp fragment traffic. P still comes from
// registers (the "RS" form): the m64nN accumulator layout is, warp by warp, the m16n8
// layout of mma.sync, so step 7's softmax and epilogue helpers apply unchanged.
//
// Shared-memory tiles use the 128-byte swizzle wgmma expects (CUTLASS's Swizzle<3,4,3>): a
// tile is split into 64-column blocks (128 bytes a row); in row r the 16-byte chunk c lives at
// chunk c ^ (r % 8). Every 8 rows form a 1024-byte atom, which must be 1024-byte aligned.
// K tiles are K-major B operands; V tiles, stored the same way (rows = keys), are MN-major B
// operands (transposed), so neither needs a transpose pass.
#pragma once

#include "fa/common.cuh"
#include "fa/pipeline.cuh"
#include "fa/softmax.cuh"

#include <type_traits>

namespace fa {

template <int D_, int BC_, int KV_STAGES_, int PRODUCER_WARPS_ = 1, int CONSUMER_WARPGROUPS_ = 2,
          int CTAS_PER_SM_ = CONSUMER_WARPGROUPS_ == 1 ? 2 : 1, int PRODUCER_REGISTERS_ = CONSUMER_WARPGROUPS_ == 1 ? 24 : 40,
          class Elem_ = half>
struct WgmmaTile {
  using Elem = Elem_;  // half or __nv_bfloat16: Q, K, V, O and P
  static constexpr int D = D_;
  static constexpr int CONSUMER_WARPGROUPS = CONSUMER_WARPGROUPS_;  // each owns 64 query rows; they share K/V stages
  static constexpr int BR = 64 * CONSUMER_WARPGROUPS;
  static constexpr int BC = BC_;
  static constexpr int CONSUMER_THREADS = 128 * CONSUMER_WARPGROUPS;
  static constexpr int PRODUCER_WARPS = PRODUCER_WARPS_;
  static constexpr int THREADS = CONSUMER_THREADS + 32 * PRODUCER_WARPS;
  static constexpr int KV_STAGES = KV_STAGES_;
  static constexpr int CTAS_PER_SM = CTAS_PER_SM_;  // resident CTAs per SM the budgets below allow
  // Registers: a CTA is allocated what ptxas gives each thread under __launch_bounds__(THREADS,
  // CTAS_PER_SM), and setmaxnreg only moves registers inside that allocation (an increase
  // waits until the producer's decrease has freed them, forever if they never suffice). The
  // producer keeps what issuing copies needs; the consumers take the rest (at most 232).
  // Two consumer warpgroups, 1 CTA/SM: 168 at launch -> 40 / 232. One, 2 CTAs/SM: 128 -> 24 / 232.
  static constexpr int LAUNCH_REGISTERS = 65536 / (THREADS * CTAS_PER_SM) / 8 * 8;
  static constexpr int PRODUCER_REGISTERS = PRODUCER_REGISTERS_;  // 24 or 40 suffice for TMA; cp.async copies want 40-56
  static constexpr int CONSUMER_REGISTERS_FIT =
      (THREADS * LAUNCH_REGISTERS - 32 * PRODUCER_WARPS * PRODUCER_REGISTERS) / CONSUMER_THREADS / 8 * 8;
  static constexpr int CONSUMER_REGISTERS = CONSUMER_REGISTERS_FIT < 232 ? CONSUMER_REGISTERS_FIT : 232;
  static constexpr bool ASYNC_ARRIVE = true;
  static constexpr bool SWIZZLE_128B = true;  // produce_kv_tiles copies through cp_async_tile_sw128
  // ptxas checks each wgmma's accumulators against the launch bound's registers, not setmaxnreg's:
  // under 128 (three CTAs per SM: 80) it refuses m64n128 ("insufficient registers"), so S = Q K^T
  // is issued as N = 64 pieces.
  static constexpr bool SPLIT_SCORES = LAUNCH_REGISTERS < 128;

  static constexpr int SWIZZLE_ALIGN = 1024;
  static constexpr size_t Q_HALVES = BR * D;
  static constexpr size_t KV_HALVES = BC * D;
  static constexpr size_t smem_bytes() {
    return (Q_HALVES + 2 * KV_STAGES * KV_HALVES) * sizeof(Elem) + SWIZZLE_ALIGN;  // + slack to align
  }

  struct Smem : QkvCarving<Elem, Q_HALVES, KV_HALVES, KV_STAGES> {  // from the first SWIZZLE_ALIGN boundary
    __device__ explicit Smem(unsigned char* base)
        : QkvCarving<Elem, Q_HALVES, KV_HALVES, KV_STAGES>(
              base + (SWIZZLE_ALIGN - smem_address(base) % SWIZZLE_ALIGN) % SWIZZLE_ALIGN) {}
  };
};

namespace wgmma {

// Shared-memory matrix descriptor, 128-byte swizzle (layout type 1). Offsets in bytes.
__device__ __forceinline__ uint64_t descriptor(const void* tile, unsigned leading_byte_offset,
                                               unsigned stride_byte_offset) {
  return static_cast<uint64_t>((smem_address(tile) & 0x3FFFF) >> 4) |
         static_cast<uint64_t>((leading_byte_offset >> 4) & 0x3FFF) << 16 |
         static_cast<uint64_t>((stride_byte_offset >> 4) & 0x3FFF) << 32 | 1ull << 62;
}

constexpr unsigned kAtomBytes = 1024;  // 8 swizzled rows of 128 bytes

// A K-major operand (Q as A, K as B): ROWS x D tile, k-step kk covers columns 16kk..16kk+15.
// Inside a 128-byte row the step is a plain +32 bytes; the hardware applies the swizzle.
template <int ROWS, class Elem>
__device__ __forceinline__ uint64_t k_major(const Elem* tile, int kk) {
  return descriptor(tile + (kk / 4) * (ROWS * 64) + (kk % 4) * 16, 16, kAtomBytes);
}

// V as an MN-major B operand: k-step kk covers keys 16kk..16kk+15 (two 8-row atoms, SBO apart);
// the next 64 columns of D (D = 128) lie one column block (LBO) further on.
template <int ROWS, class Elem>
__device__ __forceinline__ uint64_t mn_major(const Elem* tile, int kk) {
  return descriptor(tile + kk * 16 * 64, ROWS * 128, kAtomBytes);
}

// wgmma's asynchronous register use is invisible to the compiler: fence the accumulators (float) so
// no read or write of them moves across issue or wait, and the A fragments (unsigned) a wgmma in
// flight still reads, so that they stay live, unchanged, until here.
template <class Reg, int N>
__device__ __forceinline__ void fence_registers(Reg (&regs)[N][4]) {
  static_assert(std::is_same_v<Reg, float> || std::is_same_v<Reg, unsigned>, "accumulators or A fragments");
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if constexpr (std::is_same_v<Reg, float>) asm volatile("" : "+f"(regs[i][j]));
      else asm volatile("" : "+r"(regs[i][j]));
    }
}

__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Hand registers between warpgroups (sm_90a): the producer gives up what it does not need, the
// consumers take it. Both sides of the CTA must call it (it is .sync.aligned per warpgroup).
template <int REGISTERS, bool INCREASE>
__device__ __forceinline__ void set_max_registers() {
  if constexpr (INCREASE) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGISTERS));
  else asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGISTERS));
}

// Ping-pong between a CTA's two consumer warpgroups (named barriers 1 and 2; 0 is
// __syncthreads): a warpgroup issues its GEMMs only on its turn, then hands the turn to the
// other, so one warpgroup's softmax runs while the other's GEMMs hold the tensor cores.
// Each barrier counts 256 threads: the 128 waiting and the 128 passing the turn.
__device__ __forceinline__ void wait_turn(int warpgroup) {
  asm volatile("bar.sync %0, 256;\n" ::"r"(1 + warpgroup) : "memory");
}
__device__ __forceinline__ void pass_turn(int warpgroup) {
  asm volatile("bar.arrive %0, 256;\n" ::"r"(2 - warpgroup) : "memory");
}

// Makes generic-proxy writes to shared memory (cp.async, st.shared) visible to wgmma's reads.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// The accumulator operands of a wgmma (d[0..N/2) as "+f" outputs, in the order the PTX lists them) and
// their place-holders in the instruction text, written once for the wrappers below (N = 64: the first
// half; N = 128: both).
#define FA_WGMMA_ACC_0_31 \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define FA_WGMMA_ACC_32_63 \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define FA_WGMMA_REGS_0_31 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define FA_WGMMA_REGS_32_63 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"

// m64nNk16, f32 += Elem * Elem with Elem half or __nv_bfloat16 (the PTX type TYPE, "f16" or
// "bf16"), N = 64 or 128 (SHAPE "m64n64k16" or "m64n128k16"; REGS and ACC: d's place-holders and
// operands, N/2 of them). _SS: A and B from descriptors; _RS: A from registers (the m16n8k16
// A-fragment layout per warp), B transposed (MN-major). AB: the A and B place-holders, which follow d's;
// P: the scale-d predicate's.
#define FA_WGMMA_MMA_SS(SHAPE, REGS, ACC, AB, P, TYPE) \
  asm volatile( \
      "{\n .reg .pred p;\n setp.ne.b32 p, %" P ", 0;\n" \
      " wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " {" REGS "}," \
      " " AB ", p, 1, 1, 0, 0;\n}\n" \
      : ACC \
      : "l"(desc_a), "l"(desc_b), "r"(accumulate))
#define FA_WGMMA_MMA_RS_MN_MAJOR_B(SHAPE, REGS, ACC, AB, P, TYPE) \
  asm volatile( \
      "{\n .reg .pred p;\n setp.ne.b32 p, %" P ", 0;\n" \
      " wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " {" REGS "}," \
      " " AB ", p, 1, 1, 1;\n}\n" \
      : ACC \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1))
#define FA_WGMMA_ACC_0_63 FA_WGMMA_ACC_0_31, FA_WGMMA_ACC_32_63
#define FA_WGMMA_REGS_0_63 FA_WGMMA_REGS_0_31 ", " FA_WGMMA_REGS_32_63

// d: N/2 floats per thread.
template <int N, class Elem>
__device__ __forceinline__ void mma_ss_n(float* d, uint64_t desc_a, uint64_t desc_b, int accumulate) {
  static_assert(N == 64 || N == 128, "one wgmma of N = 64 or 128");
  if constexpr (N == 64 && is_bf16<Elem>)
    FA_WGMMA_MMA_SS("m64n64k16", FA_WGMMA_REGS_0_31, FA_WGMMA_ACC_0_31, "%32, %33", "34", "bf16");
  else if constexpr (N == 64)
    FA_WGMMA_MMA_SS("m64n64k16", FA_WGMMA_REGS_0_31, FA_WGMMA_ACC_0_31, "%32, %33", "34", "f16");
  else if constexpr (is_bf16<Elem>)
    FA_WGMMA_MMA_SS("m64n128k16", FA_WGMMA_REGS_0_63, FA_WGMMA_ACC_0_63, "%64, %65", "66", "bf16");
  else
    FA_WGMMA_MMA_SS("m64n128k16", FA_WGMMA_REGS_0_63, FA_WGMMA_ACC_0_63, "%64, %65", "66", "f16");
}

template <int N, class Elem>
__device__ __forceinline__ void mma_rs_n_mn_major_b(float* d, const unsigned (&a)[4], uint64_t desc_b) {
  static_assert(N == 64 || N == 128, "one wgmma of N = 64 or 128");
  if constexpr (N == 64 && is_bf16<Elem>)
    FA_WGMMA_MMA_RS_MN_MAJOR_B("m64n64k16", FA_WGMMA_REGS_0_31, FA_WGMMA_ACC_0_31, "{%32, %33, %34, %35}, %36",
                               "37", "bf16");
  else if constexpr (N == 64)
    FA_WGMMA_MMA_RS_MN_MAJOR_B("m64n64k16", FA_WGMMA_REGS_0_31, FA_WGMMA_ACC_0_31, "{%32, %33, %34, %35}, %36",
                               "37", "f16");
  else if constexpr (is_bf16<Elem>)
    FA_WGMMA_MMA_RS_MN_MAJOR_B("m64n128k16", FA_WGMMA_REGS_0_63, FA_WGMMA_ACC_0_63, "{%64, %65, %66, %67}, %68",
                               "69", "bf16");
  else
    FA_WGMMA_MMA_RS_MN_MAJOR_B("m64n128k16", FA_WGMMA_REGS_0_63, FA_WGMMA_ACC_0_63, "{%64, %65, %66, %67}, %68",
                               "69", "f16");
}

template <int N, class Elem = half>
__device__ __forceinline__ void mma_ss(float (&d)[N / 8][4], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  static_assert(N == 64 || N == 128 || N == 192, "wgmma wrappers exist for N = 64, 128 and 192");
  if constexpr (N == 64) mma_ss_n<64, Elem>(&d[0][0], desc_a, desc_b, accumulate);
  else if constexpr (N == 128) mma_ss_n<128, Elem>(&d[0][0], desc_a, desc_b, accumulate);
  else {  // N = 192 as 128 + 64: rows 128.. of a K-major B (128-byte rows) lie 16 KB on in every column block
    mma_ss_n<128, Elem>(&d[0][0], desc_a, desc_b, accumulate);
    mma_ss_n<64, Elem>(&d[16][0], desc_a, desc_b + (128 * 128 >> 4), accumulate);
  }
}

template <int N, class Elem = half>
__device__ __forceinline__ void mma_rs_mn_major_b(float (&d)[N / 8][4], const unsigned (&a)[4], uint64_t desc_b) {
  static_assert(N == 64 || N == 128, "wgmma wrappers exist for N = 64 and 128");
  if constexpr (N == 64) mma_rs_n_mn_major_b<64, Elem>(&d[0][0], a, desc_b);
  else mma_rs_n_mn_major_b<128, Elem>(&d[0][0], a, desc_b);
}

// The k-steps' descriptors as offsets from k-step 0's (step 36): only the start address field moves (in
// 16-byte units), and no tile of at most 256 KB of shared memory carries out of it.
template <int ROWS, class Elem>
constexpr uint64_t k_major_step(int kk) {
  return static_cast<uint64_t>(((kk / 4) * (ROWS * 64) + (kk % 4) * 16) * sizeof(Elem) >> 4);
}
template <class Elem>
constexpr uint64_t mn_major_step(int kk) {
  return static_cast<uint64_t>(kk * 16 * 64 * sizeof(Elem) >> 4);
}

// A descriptor whose address the whole warp holds alike, its low word read through a shuffle so that the
// compiler knows: the steps from it then stay in uniform registers (the high word is a constant).
__device__ __forceinline__ uint64_t warp_uniform(uint64_t desc) {
  const uint32_t lo = __shfl_sync(0xffffffffu, static_cast<uint32_t>(desc), 0);
  return (desc >> 32 << 32) | lo;
}

// The descriptors of a tile's k-steps. STEPPED (step 36): one warp-uniform descriptor a tile, each k-step
// a compile-time offset from it; otherwise each k-step's built from its address (steps 9-35: in vector
// registers, moved to uniform ones a wgmma). K_MAJOR: the layout of Q and K (k_major); else V's (mn_major).
template <bool K_MAJOR, int ROWS, bool STEPPED, class Elem>
struct TileDescriptors {
  const Elem* tile;
  uint64_t base;
  static __device__ uint64_t at(const Elem* t, int kk) { return K_MAJOR ? k_major<ROWS>(t, kk) : mn_major<ROWS>(t, kk); }
  __device__ explicit TileDescriptors(const Elem* t) : tile(t), base(STEPPED ? warp_uniform(at(t, 0)) : 0) {}
  __device__ uint64_t operator()(int kk) const {
    if constexpr (STEPPED) return base + (K_MAJOR ? k_major_step<ROWS, Elem>(kk) : mn_major_step<Elem>(kk));
    else return at(tile, kk);
  }
};
template <int ROWS, bool STEPPED, class Elem>
using KMajorTile = TileDescriptors<true, ROWS, STEPPED, Elem>;
template <int ROWS, bool STEPPED, class Elem>
using MnMajorTile = TileDescriptors<false, ROWS, STEPPED, Elem>;

// S = Q_wg K^T for one key tile (D/16 k-steps), issued and committed as one group.
// With T::SPLIT_SCORES, as BC / 64 wgmmas of N = 64: rows 64j.. of a K-major B (128-byte rows) lie
// j * 8 KB on in every column block. STEPPED: the descriptors as KMajorTile's (step 36).
template <class T, bool STEPPED = false>
__device__ __forceinline__ void issue_scores(float (&s)[T::BC / 8][4], const ElemOf<T>* q_wg, const ElemOf<T>* k_tile) {
  const KMajorTile<T::BR, STEPPED, ElemOf<T>> q_desc(q_wg);
  const KMajorTile<T::BC, STEPPED, ElemOf<T>> k_desc(k_tile);
#pragma unroll
  for (int kk = 0; kk < T::D / 16; ++kk) {
    if constexpr (T::SPLIT_SCORES) {
#pragma unroll
      for (int j = 0; j < T::BC / 64; ++j)
        mma_ss_n<64, ElemOf<T>>(&s[8 * j][0], q_desc(kk), k_desc(kk) + (j * 64 * 128 >> 4), kk > 0);
    } else {
      mma_ss<T::BC, ElemOf<T>>(s, q_desc(kk), k_desc(kk), kk > 0);
    }
  }
  commit();
}

// O += P V for one key tile (BC/16 k-steps), issued and committed as one group.
template <class T, bool STEPPED = false>
__device__ __forceinline__ void issue_pv(float (&o)[T::D / 8][4], const unsigned (&p)[T::BC / 16][4],
                                         const ElemOf<T>* v_tile) {
  const MnMajorTile<T::BC, STEPPED, ElemOf<T>> v_desc(v_tile);
#pragma unroll
  for (int kk = 0; kk < T::BC / 16; ++kk) mma_rs_mn_major_b<T::D, ElemOf<T>>(o, p[kk], v_desc(kk));
  commit();
}

// O / l of a warp's 16 rows (the accumulator layout), as Elem, into its warpgroup's 64-row O tile
// in shared memory, laid out as a TMA store of 64 x 64 boxes reads it (fa::tma::store_tile): per
// 64-column block, row r at r * 128 bytes, its 16-byte chunk c at chunk c ^ (r % 8). A warp's
// 4-byte writes of one column chunk then fall in 32 distinct banks (8 rows x 4 lanes).
template <class T>
__device__ __forceinline__ void stage_output(ElemOf<T>* o_tile, const float (&o)[T::D / 8][4], RowState (&rows)[2],
                                             int warp_row0, int lane) {
  const int t = lane % 4;
  for_each_output_pair<T>(o, rows, /*rows_valid=*/16, lane, [&](int warp_row, int n, unsigned pair) {
    const int r = warp_row0 + warp_row;
    *reinterpret_cast<unsigned*>(o_tile + (n / 8) * 64 * 64 + r * 64 + ((n % 8) ^ (r % 8)) * 8 + 2 * t) = pair;
  });
}

}  // namespace wgmma
}  // namespace fa
