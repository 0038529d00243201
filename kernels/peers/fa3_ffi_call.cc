// FlashAttention-3's forward, as compiled in dew-flash-attn's libdew_flash_attn3.so, called through
// its XLA FFI handler (dew_flash3_mha_fwd) with a call frame built here, on the caller's CUDA stream:
// no jax and no XLA runtime in the process, so the launch is timed (and captured in CUDA graphs) like
// every other peer's.
//
// Why the FFI handler and not FA3's C++ entry run_mha_fwd(Flash_fwd_params&, cudaStream_t): the
// wheel does not say which FlashAttention commit it was built from, and Flash_fwd_params changes
// between commits, with nothing to check a layout against. The XLA FFI C API (third_party/xla_ffi)
// is versioned and every struct carries its size: the handler refuses a call frame of another size,
// decodes every argument, result and attribute by type and name, and, asked through the metadata
// extension, says which API version it was built against (lab_fa3_api_version), which the Python
// side checks before the first call, by XLA's own rule: at least 0.1, at most this header's.
//
// The handler's signature (its mangled binding type in the library): stream, scratch allocator and
// device ordinal from the context; buffers q, k, v ([B, S, H, D] and [B, S, H_kv, D], fp16 or bf16);
// attributes softmax_scale (f64), is_causal (pred), window_size_left and window_size_right (s64);
// results out ([B, S, H, D]), softmax_lse ([B, H, S] f32) and two f32 placeholders of the split path.
// Scratch memory the handler asks for comes from an arena the caller owns (a torch allocation).

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "xla/ffi/api/c_api.h"

namespace {

// XLA_FFI_Error is opaque to handlers: this library creates, reads and destroys its own.
struct Error {
  XLA_FFI_Error_Code code;
  std::string message;
};

// XLA_FFI_InvokeContext is opaque to handlers too: what one call hands the API functions below.
struct Context {
  void* stream;
  int32_t device;
  char* arena;
  size_t arena_size;
  size_t arena_used;
  size_t arena_wanted;  // the largest end of an allocation asked for, within the arena or not
};

Context* context_of(XLA_FFI_InvokeContext* ctx) { return reinterpret_cast<Context*>(ctx); }

XLA_FFI_Error* make_error(XLA_FFI_Error_Code code, const std::string& message) {
  return reinterpret_cast<XLA_FFI_Error*>(new Error{code, message});
}

XLA_FFI_Error* error_create(XLA_FFI_Error_Create_Args* args) {
  return make_error(args->errc, args->message ? args->message : "");
}

void error_get_details(XLA_FFI_Error_GetDetails_Args* args) {
  const Error* e = reinterpret_cast<const Error*>(args->error);
  args->message = e->message.c_str();
  args->errc = e->code;
}

void error_destroy(XLA_FFI_Error_Destroy_Args* args) { delete reinterpret_cast<Error*>(args->error); }

XLA_FFI_Error* stream_get(XLA_FFI_Stream_Get_Args* args) {
  args->stream = context_of(args->ctx)->stream;
  return nullptr;
}

XLA_FFI_Error* device_ordinal_get(XLA_FFI_DeviceOrdinal_Get_Args* args) {
  args->device_ordinal = context_of(args->ctx)->device;
  return nullptr;
}

// Scratch from the caller's arena, bump-allocated: freed all at once when the call returns (the
// arena's memory is the caller's, stream-ordered like the launch). Too small: an error that names
// the size wanted, so the caller can grow it (lab.measure.fa3 does, outside any timed region).
XLA_FFI_Error* device_memory_allocate(XLA_FFI_DeviceMemory_Allocate_Args* args) {
  Context* c = context_of(args->ctx);
  size_t align = std::max<size_t>(args->alignment, 256);
  size_t start = (c->arena_used + align - 1) / align * align;
  c->arena_wanted = std::max(c->arena_wanted, start + args->size);
  if (c->arena == nullptr || start + args->size > c->arena_size) {
    return make_error(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                      "lab fa3 shim: scratch arena of " + std::to_string(c->arena_size) + " bytes too small, " +
                          std::to_string(start + args->size) + " wanted");
  }
  args->data = c->arena + start;
  c->arena_used = start + args->size;
  return nullptr;
}

XLA_FFI_Error* device_memory_free(XLA_FFI_DeviceMemory_Free_Args*) { return nullptr; }

// Everything else the API offers is not needed by a forward call: said loudly if it ever is.
template <typename Args>
XLA_FFI_Error* not_provided(Args*) {
  return make_error(XLA_FFI_Error_Code_UNIMPLEMENTED,
                    "lab fa3 shim: the handler asked for an XLA FFI API function this shim does not provide");
}

XLA_FFI_Api make_api() {
  XLA_FFI_Api api;
  std::memset(&api, 0, sizeof(api));
  api.struct_size = XLA_FFI_Api_STRUCT_SIZE;
  api.api_version = XLA_FFI_Api_Version{XLA_FFI_Api_Version_STRUCT_SIZE, nullptr, XLA_FFI_API_MAJOR,
                                        XLA_FFI_API_MINOR};
  api.XLA_FFI_Error_Create = error_create;
  api.XLA_FFI_Error_GetDetails = error_get_details;
  api.XLA_FFI_Error_Destroy = error_destroy;
  api.XLA_FFI_Handler_Register = not_provided<XLA_FFI_Handler_Register_Args>;
  api.XLA_FFI_Stream_Get = stream_get;
  api.XLA_FFI_Type_Register = not_provided<XLA_FFI_Type_Register_Args>;
  api.XLA_FFI_InvokeContext_Get = not_provided<XLA_FFI_InvokeContext_Get_Args>;
  api.XLA_FFI_State_Set = not_provided<XLA_FFI_State_Set_Args>;
  api.XLA_FFI_State_Get = not_provided<XLA_FFI_State_Get_Args>;
  api.XLA_FFI_DeviceMemory_Allocate = device_memory_allocate;
  api.XLA_FFI_DeviceMemory_Free = device_memory_free;
  api.XLA_FFI_ThreadPool_Schedule = not_provided<XLA_FFI_ThreadPool_Schedule_Args>;
  api.XLA_FFI_ThreadPool_NumThreads = not_provided<XLA_FFI_ThreadPool_NumThreads_Args>;
  api.XLA_FFI_Future_Create = not_provided<XLA_FFI_Future_Create_Args>;
  api.XLA_FFI_Future_SetAvailable = not_provided<XLA_FFI_Future_SetAvailable_Args>;
  api.XLA_FFI_Future_SetError = not_provided<XLA_FFI_Future_SetError_Args>;
  api.XLA_FFI_RunId_Get = not_provided<XLA_FFI_RunId_Get_Args>;
  api.XLA_FFI_DeviceOrdinal_Get = device_ordinal_get;
  api.XLA_FFI_InvokeContext_FindExtension = not_provided<XLA_FFI_InvokeContext_FindExtension_Args>;
  return api;
}

const XLA_FFI_Api kApi = make_api();

XLA_FFI_CallFrame empty_frame() {
  XLA_FFI_CallFrame frame;
  std::memset(&frame, 0, sizeof(frame));
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.api = &kApi;
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  frame.args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  frame.rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  frame.attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  return frame;
}

// The handler's error as a message (and destroyed); 0 where it returned none.
int report(XLA_FFI_Error* err, char* message, size_t capacity) {
  if (err == nullptr) return 0;
  Error* e = reinterpret_cast<Error*>(err);
  int code = static_cast<int>(e->code) ? static_cast<int>(e->code) : -1;
  std::snprintf(message, capacity, "%s", e->message.c_str());
  delete e;
  return code;
}

XLA_FFI_Buffer buffer(XLA_FFI_DataType dtype, void* data, int64_t rank, int64_t* dims) {
  return XLA_FFI_Buffer{XLA_FFI_Buffer_STRUCT_SIZE, nullptr, dtype, data, rank, dims};
}

}  // namespace

extern "C" {

// The handler `symbol` of the library at `path`, or null with dlerror's message.
void* lab_fa3_open(const char* path, const char* symbol, char* message, size_t capacity) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::snprintf(message, capacity, "%s", dlerror());
    return nullptr;
  }
  void* handler = dlsym(lib, symbol);
  if (handler == nullptr) std::snprintf(message, capacity, "%s", dlerror());
  return handler;
}

// The XLA FFI C API version this shim was compiled against.
void lab_fa3_shim_version(int* major, int* minor) {
  *major = XLA_FFI_API_MAJOR;
  *minor = XLA_FFI_API_MINOR;
}

// The API version the handler was built against, asked through the metadata extension; nonzero (and
// the handler's message) where it refuses the question, e.g. a call frame of another size.
int lab_fa3_api_version(void* handler, int* major, int* minor, unsigned* traits, char* message, size_t capacity) {
  XLA_FFI_Metadata metadata;
  std::memset(&metadata, 0, sizeof(metadata));
  metadata.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension extension;
  extension.extension_base = XLA_FFI_InternalExtension{XLA_FFI_Metadata_Extension_STRUCT_SIZE,
                                                        XLA_FFI_Extension_Metadata, nullptr};
  extension.metadata = &metadata;
  XLA_FFI_CallFrame frame = empty_frame();
  frame.extension_start = &extension.extension_base;
  int code = report(reinterpret_cast<XLA_FFI_Handler*>(handler)(&frame), message, capacity);
  *major = metadata.api_version.major_version;
  *minor = metadata.api_version.minor_version;
  *traits = metadata.traits;
  return code;
}

// One forward call. dtype: XLA_FFI_DataType_F16 (10) or BF16 (16). q and out [B, S, H, D], k and v
// [B, S, H_kv, D], lse [B, H, S] f32, contiguous; accum and lse_accum at least 4 bytes of f32 each.
// window_left and window_right: -1 for none. Returns 0, or the handler's error code with its message;
// *arena_wanted: the end of the furthest scratch allocation asked for (for sizing the arena).
int lab_fa3_forward(void* handler, int dtype, void* q, void* k, void* v, void* out, void* lse, void* accum,
                    void* lse_accum, int64_t batch, int64_t seqlen, int64_t heads, int64_t heads_kv, int64_t head_dim,
                    double softmax_scale, int causal, int64_t window_left, int64_t window_right, void* stream,
                    int device, void* arena, size_t arena_size, size_t* arena_wanted, char* message,
                    size_t capacity) {
  const auto type = static_cast<XLA_FFI_DataType>(dtype);
  int64_t q_dims[4] = {batch, seqlen, heads, head_dim};
  int64_t kv_dims[4] = {batch, seqlen, heads_kv, head_dim};
  int64_t lse_dims[3] = {batch, heads, seqlen};
  int64_t accum_dims[4] = {1, 1, 1, 1};
  int64_t lse_accum_dims[3] = {1, 1, 1};
  XLA_FFI_Buffer in[3] = {buffer(type, q, 4, q_dims), buffer(type, k, 4, kv_dims), buffer(type, v, 4, kv_dims)};
  XLA_FFI_Buffer res[4] = {buffer(type, out, 4, q_dims), buffer(XLA_FFI_DataType_F32, lse, 3, lse_dims),
                           buffer(XLA_FFI_DataType_F32, accum, 4, accum_dims),
                           buffer(XLA_FFI_DataType_F32, lse_accum, 3, lse_accum_dims)};
  XLA_FFI_ArgType arg_types[3] = {XLA_FFI_ArgType_BUFFER, XLA_FFI_ArgType_BUFFER, XLA_FFI_ArgType_BUFFER};
  void* args[3] = {&in[0], &in[1], &in[2]};
  XLA_FFI_RetType ret_types[4] = {XLA_FFI_RetType_BUFFER, XLA_FFI_RetType_BUFFER, XLA_FFI_RetType_BUFFER,
                                  XLA_FFI_RetType_BUFFER};
  void* rets[4] = {&res[0], &res[1], &res[2], &res[3]};

  // Attributes, sorted by name as the call frame must pass them.
  bool is_causal = causal != 0;
  XLA_FFI_Scalar s_causal{XLA_FFI_DataType_PRED, &is_causal};
  XLA_FFI_Scalar s_scale{XLA_FFI_DataType_F64, &softmax_scale};
  XLA_FFI_Scalar s_left{XLA_FFI_DataType_S64, &window_left};
  XLA_FFI_Scalar s_right{XLA_FFI_DataType_S64, &window_right};
  static const char* kNames[4] = {"is_causal", "softmax_scale", "window_size_left", "window_size_right"};
  XLA_FFI_ByteSpan spans[4];
  XLA_FFI_ByteSpan* names[4];
  for (int i = 0; i < 4; ++i) {
    spans[i] = XLA_FFI_ByteSpan{kNames[i], std::strlen(kNames[i])};
    names[i] = &spans[i];
  }
  XLA_FFI_AttrType attr_types[4] = {XLA_FFI_AttrType_SCALAR, XLA_FFI_AttrType_SCALAR, XLA_FFI_AttrType_SCALAR,
                                    XLA_FFI_AttrType_SCALAR};
  void* attrs[4] = {&s_causal, &s_scale, &s_left, &s_right};

  Context context{stream, device, static_cast<char*>(arena), arena_size, 0, 0};
  XLA_FFI_CallFrame frame = empty_frame();
  frame.ctx = reinterpret_cast<XLA_FFI_InvokeContext*>(&context);
  frame.args.size = 3;
  frame.args.types = arg_types;
  frame.args.args = args;
  frame.rets.size = 4;
  frame.rets.types = ret_types;
  frame.rets.rets = rets;
  frame.attrs.size = 4;
  frame.attrs.types = attr_types;
  frame.attrs.names = names;
  frame.attrs.attrs = attrs;
  int code = report(reinterpret_cast<XLA_FFI_Handler*>(handler)(&frame), message, capacity);
  *arena_wanted = context.arena_wanted;
  return code;
}

}  // extern "C"
