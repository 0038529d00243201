// A stand-in for FlashAttention-3's XLA FFI forward handler (dew_flash3_mha_fwd), bound with XLA's own
// C++ binding (third_party/xla_ffi: ffi.h) to the same signature, so that the call frames
// kernels/peers/fa3_ffi_call.cc builds are decoded by XLA's code. It records what it was handed, asks
// for scratch as FA3's does, copies q into out (host memory in the CPU tests) and writes the scale into
// lse; a negative scale makes it return an error. tests/test_fa3_peer.py builds and calls it.
#include <cstdint>
#include <cstring>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
struct CUstream_st;

extern "C" struct Seen {
  void* stream;
  int32_t device;
  int32_t dtype;
  void* q;
  void* k;
  void* v;
  int64_t q_dims[4];
  int64_t kv_dims[4];
  int64_t lse_dims[3];
  double scale;
  int32_t causal;
  int64_t window_left;
  int64_t window_right;
  void* scratch;
  int32_t calls;
};

static Seen seen;

extern "C" Seen* stand_in_seen() { return &seen; }

static ffi::Error forward(CUstream_st* stream, ffi::ScratchAllocator scratch, int device, ffi::AnyBuffer q,
                          ffi::AnyBuffer k, ffi::AnyBuffer v, double scale, bool causal, int64_t left, int64_t right,
                          ffi::Result<ffi::AnyBuffer> out, ffi::Result<ffi::AnyBuffer> lse,
                          ffi::Result<ffi::AnyBuffer> accum, ffi::Result<ffi::AnyBuffer> lse_accum) {
  seen.calls += 1;
  seen.stream = stream;
  seen.device = device;
  seen.dtype = static_cast<int32_t>(q.element_type());
  seen.q = q.untyped_data();
  seen.k = k.untyped_data();
  seen.v = v.untyped_data();
  for (int i = 0; i < 4; ++i) seen.q_dims[i] = q.dimensions()[i];
  for (int i = 0; i < 4; ++i) seen.kv_dims[i] = k.dimensions()[i];
  for (int i = 0; i < 3; ++i) seen.lse_dims[i] = lse->dimensions()[i];
  seen.scale = scale;
  seen.causal = causal;
  seen.window_left = left;
  seen.window_right = right;
  if (scale < 0) return ffi::Error::InvalidArgument("stand-in: negative softmax_scale");
  auto mem = scratch.Allocate(4096, 16);  // FA3 asks for its tile scheduler's counter this way
  if (!mem.has_value()) return ffi::Error(ffi::ErrorCode::kResourceExhausted, "stand-in: no scratch");
  seen.scratch = *mem;
  std::memcpy(out->untyped_data(), q.untyped_data(), q.size_bytes());
  float s = static_cast<float>(scale);
  std::memcpy(lse->untyped_data(), &s, sizeof(s));
  (void)accum;
  (void)lse_accum;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(stand_in_fwd, forward,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<CUstream_st*>>()
                                  .Ctx<ffi::ScratchAllocator>()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Attr<double>("softmax_scale")
                                  .Attr<bool>("is_causal")
                                  .Attr<int64_t>("window_size_left")
                                  .Attr<int64_t>("window_size_right")
                                  .Ret<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>());

// Handlers built against other API versions: they answer the metadata question with theirs.
template <int kMajor, int kMinor>
static XLA_FFI_Error* versioned(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr && frame->extension_start->type == XLA_FFI_Extension_Metadata) {
    auto* ext = reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
    ext->metadata->api_version = XLA_FFI_Api_Version{XLA_FFI_Api_Version_STRUCT_SIZE, nullptr, kMajor, kMinor};
  }
  return nullptr;
}

extern "C" XLA_FFI_Error* stand_in_v0_1(XLA_FFI_CallFrame* frame) { return versioned<0, 1>(frame); }  // the wheel's
extern "C" XLA_FFI_Error* stand_in_v0_0(XLA_FFI_CallFrame* frame) { return versioned<0, 0>(frame); }
extern "C" XLA_FFI_Error* stand_in_v0_5(XLA_FFI_CallFrame* frame) { return versioned<0, 5>(frame); }
extern "C" XLA_FFI_Error* stand_in_v1_0(XLA_FFI_CallFrame* frame) { return versioned<1, 0>(frame); }
