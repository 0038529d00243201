// Shared plumbing for every variant: the shape passed to kernels, index helpers, and the C entry
// point each variant exports. No torch here: variant files compile with plain nvcc.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

namespace fa {

// Everything a kernel needs besides the four tensor pointers. Q and O are contiguous (B, H, S, D),
// K and V (B, H_kv, S, D), fp16 (bf16 too for the steps that take model inputs); the grid is
// (query tiles, H, B). H_kv == H except in those steps.
struct AttnShape {
  int B, H, S;
  float scale;  // multiplies Q K^T before the softmax
  int causal;   // 1: key j is visible to query i only when j <= i
  int H_kv;     // K/V heads; query head h reads K/V head h / (H / H_kv) (SDPA's enable_gqa)
};

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The K/V matrix of query matrix bh = batch * H + head: batch * H_kv + head / (H / H_kv). The
// query heads of one K/V head are neighbours in bh, so work walked in bh order meets them together.
__host__ __device__ inline int kv_head_index(const AttnShape& shape, int bh) {
  const int batch = bh / shape.H, head = bh % shape.H;
  return batch * shape.H_kv + head / (shape.H / shape.H_kv);
}

// --- Element types -------------------------------------------------------------------------------
// Inputs and output are 16-bit: fp16 in every step, bf16 too in the steps that take model inputs.
// Math is fp32 either way; the element type picks the MMA's input type and the conversions of P
// and O. A tile description names its type as T::Elem (fp16 when it has none: ElemOf).
template <class T, class = void>
struct ElemOfT {
  using type = half;
};
template <class T>
struct ElemOfT<T, std::void_t<typename T::Elem>> {
  using type = typename T::Elem;
};
template <class T>
using ElemOf = typename ElemOfT<T>::type;

template <class Elem>
constexpr bool is_bf16 = std::is_same_v<Elem, __nv_bfloat16>;

// Two fp32 values as one 32-bit register of two Elems (lo in the low half), rounded to nearest.
template <class Elem>
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  static_assert(std::is_same_v<Elem, half> || is_bf16<Elem>, "elements are half or __nv_bfloat16");
  if constexpr (is_bf16<Elem>) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&h);
  } else {
    const half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&h);
  }
}

// The dtype codes of fa_forward_ex (lab.kernels.attention agrees).
template <class Elem>
constexpr int dtype_code = is_bf16<Elem> ? 1 : 0;

// Offset of this block's (batch, head) matrix in a (B, H, S, D) tensor.
template <int D>
__device__ __forceinline__ size_t head_offset(const AttnShape& shape) {
  return (static_cast<size_t>(blockIdx.z) * shape.H + blockIdx.y) * static_cast<size_t>(shape.S) * D;
}

// Number of key/value tiles a query tile starting at q0 has to visit. Causal tiles that lie
// wholly above the diagonal are skipped, so causal does about half the work.
template <int BR, int BC>
__device__ __forceinline__ int kv_tile_count(const AttnShape& shape, int q0) {
  const int all = ceil_div(shape.S, BC);
  if (!shape.causal) return all;
  const int last_query = min(q0 + BR, shape.S) - 1;
  return min(all, last_query / BC + 1);
}

// How many CTAs of a tile description are meant to share an SM (T::CTAS_PER_SM), default 1.
template <class T, class = void>
struct CtasPerSm : std::integral_constant<int, 1> {};
template <class T>
struct CtasPerSm<T, std::void_t<decltype(T::CTAS_PER_SM)>> : std::integral_constant<int, T::CTAS_PER_SM> {};

// Internal linkage on purpose: a template's function-local static is otherwise one object
// shared by every variant library loaded into the process (the dynamic linker unifies such
// weak symbols), so a second library using the same Tile type would skip its own opt-in and
// fail to launch with cudaErrorInvalidValue.
namespace {

// Whether `kernel` had its shared-memory limit raised on `device` (mark: record that it has now).
// Keyed by the kernel itself, not by a template's arguments: two kernels of one library may share a
// Tile type and a signature (step 35's two-warpgroup tile and no_two_ctas_per_sm's D = 64 tile did),
// and a flag per template instance let the second skip its opt-in and fail to launch.
inline bool opted_in(const void* kernel, int device, bool mark = false) {
  static std::mutex lock;
  static std::vector<std::pair<const void*, int>> done;
  const std::lock_guard<std::mutex> guard(lock);
  for (const auto& entry : done)
    if (entry.first == kernel && entry.second == device) return true;
  if (mark) done.emplace_back(kernel, device);
  return false;
}

// Raise a kernel's dynamic shared-memory limit above 48 KB, once per kernel and device (doing it
// once also keeps the call out of CUDA-graph captures of later launches). Returns a cudaError_t value.
template <class Tile, class Kernel>
int opt_in_shared_memory(Kernel kernel) {
  const size_t smem = Tile::smem_bytes();
  if (smem <= 48 * 1024) return 0;
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return static_cast<int>(err);
  const void* key = reinterpret_cast<const void*>(kernel);
  if (!opted_in(key, device)) {
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (err != cudaSuccess) return static_cast<int>(err);
    if constexpr (CtasPerSm<Tile>::value > 1) {  // ask for the shared-memory carveout that fits them
      err = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 cudaSharedmemCarveoutMaxShared);
      if (err != cudaSuccess) return static_cast<int>(err);
    }
    opted_in(key, device, /*mark=*/true);
  }
  return 0;
}

// A device attribute of the current device, read once per device (the launch rules ask for it every call).
template <cudaDeviceAttr ATTR>
inline int cached_device_attribute(int* value) {
  static int cached[64] = {};
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return static_cast<int>(err);
  if (device >= 64) return static_cast<int>(cudaDeviceGetAttribute(value, ATTR, device));
  if (!cached[device]) {
    err = cudaDeviceGetAttribute(&cached[device], ATTR, device);
    if (err != cudaSuccess) return static_cast<int>(err);
  }
  *value = cached[device];
  return 0;
}

// Multiprocessors of the current device, read once per device.
inline int multiprocessor_count(int* count) {
  return cached_device_attribute<cudaDevAttrMultiProcessorCount>(count);
}

// L2 bytes of the current device, read once per device (the prefill queue's sections, the decode maps' promotion).
inline int l2_cache_bytes(int* bytes) { return cached_device_attribute<cudaDevAttrL2CacheSize>(bytes); }

// Q | K[stages] | V[stages] from `base` on, Q_ELEMS and KV_ELEMS elements a tile: the shared-memory carving
// every tile's Smem starts with (or is); rest() is where a tile's own regions follow.
template <class Elem, size_t Q_ELEMS, size_t KV_ELEMS, int KV_STAGES>
struct QkvCarving {
  Elem* q;
  Elem* k;
  Elem* v;
  __device__ explicit QkvCarving(unsigned char* base)
      : q(reinterpret_cast<Elem*>(base)), k(q + Q_ELEMS), v(k + KV_STAGES * KV_ELEMS) {}
  __device__ void* rest() const { return v + KV_STAGES * KV_ELEMS; }
  __device__ Elem* k_stage(int st) const { return k + st * KV_ELEMS; }
  __device__ Elem* v_stage(int st) const { return v + st * KV_ELEMS; }
};

// Launch one variant's kernel for head dim D with the tile description `Tile`: one CTA per
// query tile, grid (query tiles, H, B).
template <class Tile, class... Params, class... Args>
int launch(void (*kernel)(Params...), const AttnShape& shape, cudaStream_t stream, Args... args) {
  if (int err = opt_in_shared_memory<Tile>(kernel)) return err;
  const dim3 grid(ceil_div(shape.S, Tile::BR), shape.H, shape.B);
  kernel<<<grid, Tile::THREADS, Tile::smem_bytes(), stream>>>(args..., shape);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

}  // namespace fa

// lab.build passes the cache key as a bare token (-DFA_BUILD_KEY_TOKEN=k...), which survives
// the build system's quoting better than a string literal would.
#define FA_STRINGIFY_(x) #x
#define FA_STRINGIFY(x) FA_STRINGIFY_(x)
#ifdef FA_BUILD_KEY_TOKEN
#define FA_BUILD_KEY FA_STRINGIFY(FA_BUILD_KEY_TOKEN)
#else
#define FA_BUILD_KEY "unkeyed"
#endif

// The C ABI every variant exports (loaded from Python with ctypes):
//   fa_forward      launches the kernel on `stream` (fp16, H_kv = H), returns a cudaError_t (0 = success)
//   fa_build_key    the cache key the library was built under, so a stale build is detectable
//   fa_smem_bytes   dynamic shared memory per block for head dim d (0 = unsupported)
//   fa_threads      threads per block for head dim d
//   fa_tile_rows    query rows per block (BR) for head dim d
//   fa_error_name   cudaGetErrorName of a code fa_forward returned
// and the steps that take model inputs (FA_EXPORT_MODEL_VARIANT) also:
//   fa_forward_ex   fa_forward with H_kv (a divisor of H) and a dtype (0 fp16, 1 bf16)
//   fa_dtypes       the dtypes it takes, a bitmask (1 fp16, 2 bf16)
//   fa_grouped_kv   1: H_kv may be any divisor of H
// FA_EXPORT_VARIANT(KERNEL, TILE): KERNEL is a template over D taking (q, k, v, o, shape);
// TILE is a template over D describing its launch.
// FA_EXPORT_VARIANT_WITH(LAUNCH, TILE): for kernels that need more host-side setup; LAUNCH<D>
// is called as LAUNCH<D>(q, k, v, o, shape, stream) and returns a cudaError_t value.
// FA_EXPORT_MODEL_VARIANT(LAUNCH, TILE): LAUNCH<Elem, D>(q, k, v, o, shape, stream) with Elem
// half or __nv_bfloat16 and shape.H_kv set.
#define FA_EXPORT_VARIANT(KERNEL, TILE)                                                          \
  namespace {                                                                                     \
  template <int D>                                                                                \
  int fa_launch_kernel(const half* q, const half* k, const half* v, half* o,                      \
                       const fa::AttnShape& shape, cudaStream_t st) {                             \
    return fa::launch<TILE<D>>(KERNEL<D>, shape, st, q, k, v, o);                                 \
  }                                                                                               \
  }                                                                                               \
  FA_EXPORT_VARIANT_WITH(fa_launch_kernel, TILE)

#define FA_EXPORT_VARIANT_WITH(LAUNCH, TILE)                                                   \
  extern "C" int fa_forward(const void* q, const void* k, const void* v, void* o, int B, int H, \
                            int S, int D, float scale, int causal, void* stream) {              \
    const fa::AttnShape shape{B, H, S, scale, causal, H};                                       \
    const auto* q_ = static_cast<const half*>(q);                                               \
    const auto* k_ = static_cast<const half*>(k);                                               \
    const auto* v_ = static_cast<const half*>(v);                                               \
    auto* o_ = static_cast<half*>(o);                                                           \
    auto st = static_cast<cudaStream_t>(stream);                                                \
    switch (D) {                                                                                \
      case 64: return LAUNCH<64>(q_, k_, v_, o_, shape, st);                                    \
      case 128: return LAUNCH<128>(q_, k_, v_, o_, shape, st);                                  \
      default: return static_cast<int>(cudaErrorInvalidValue);                                  \
    }                                                                                           \
  }                                                                                             \
  FA_EXPORT_VARIANT_INFO(TILE)

#define FA_EXPORT_VARIANT_INFO(TILE)                                                            \
  extern "C" const char* fa_build_key() { return FA_BUILD_KEY; }                                \
  extern "C" int fa_smem_bytes(int d) {                                                         \
    return d == 64 ? (int)TILE<64>::smem_bytes() : d == 128 ? (int)TILE<128>::smem_bytes() : 0; \
  }                                                                                             \
  extern "C" int fa_threads(int d) {                                                            \
    return d == 64 ? TILE<64>::THREADS : d == 128 ? TILE<128>::THREADS : 0;                     \
  }                                                                                             \
  extern "C" int fa_tile_rows(int d) { return d == 64 ? TILE<64>::BR : d == 128 ? TILE<128>::BR : 0; } \
  extern "C" const char* fa_error_name(int e) { return cudaGetErrorName(static_cast<cudaError_t>(e)); }

// FA_SASS_FP16_ONLY=1 leaves a build's bf16 kernels out (its bf16 calls refused): only for the CPU tests
// that compare one configuration's SASS with another's (lab.kernels.switches.sass_differences), half the
// compile of a build. Never in a build that runs.
#ifndef FA_SASS_FP16_ONLY
#define FA_SASS_FP16_ONLY 0
#endif

namespace fa {
namespace {
template <class Elem, template <class, int> class Launch>
int forward_typed(const void* q, const void* k, const void* v, void* o, const AttnShape& shape, int D,
                  cudaStream_t stream) {
  const auto* q_ = static_cast<const Elem*>(q);
  const auto* k_ = static_cast<const Elem*>(k);
  const auto* v_ = static_cast<const Elem*>(v);
  auto* o_ = static_cast<Elem*>(o);
  switch (D) {
    case 64: return Launch<Elem, 64>::run(q_, k_, v_, o_, shape, stream);
    case 128: return Launch<Elem, 128>::run(q_, k_, v_, o_, shape, stream);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

template <class Elem, template <class, int> class Launch>
int forward_built(const void* q, const void* k, const void* v, void* o, const AttnShape& shape, int D,
                  cudaStream_t stream) {
  if constexpr (FA_SASS_FP16_ONLY && is_bf16<Elem>) return static_cast<int>(cudaErrorInvalidValue);
  else return forward_typed<Elem, Launch>(q, k, v, o, shape, D, stream);
}
}  // namespace
}  // namespace fa

// LAUNCH is a class template over (Elem, D) with a static run(q, k, v, o, shape, stream): a class,
// because a function template cannot be passed as a template template argument.
#define FA_EXPORT_MODEL_VARIANT(LAUNCH, TILE)                                                   \
  extern "C" int fa_forward_ex(const void* q, const void* k, const void* v, void* o, int B,     \
                               int H, int H_kv, int S, int D, float scale, int causal,          \
                               int dtype, void* stream) {                                       \
    if (B < 1 || H < 1 || H_kv < 1 || H % H_kv) return static_cast<int>(cudaErrorInvalidValue); \
    const fa::AttnShape shape{B, H, S, scale, causal, H_kv};                                    \
    auto st = static_cast<cudaStream_t>(stream);                                                \
    switch (dtype) {                                                                            \
      case fa::dtype_code<half>: return fa::forward_built<half, LAUNCH>(q, k, v, o, shape, D, st); \
      case fa::dtype_code<__nv_bfloat16>:                                                       \
        return fa::forward_built<__nv_bfloat16, LAUNCH>(q, k, v, o, shape, D, st);              \
      default: return static_cast<int>(cudaErrorInvalidValue);                                  \
    }                                                                                           \
  }                                                                                             \
  extern "C" int fa_forward(const void* q, const void* k, const void* v, void* o, int B, int H, \
                            int S, int D, float scale, int causal, void* stream) {              \
    return fa_forward_ex(q, k, v, o, B, H, H, S, D, scale, causal, fa::dtype_code<half>, stream); \
  }                                                                                             \
  extern "C" int fa_dtypes() { return 1 << fa::dtype_code<half> | 1 << fa::dtype_code<__nv_bfloat16>; } \
  extern "C" int fa_grouped_kv() { return 1; }                                                  \
  FA_EXPORT_VARIANT_INFO(TILE)
