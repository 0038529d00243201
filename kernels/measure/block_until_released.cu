// The hold in front of a block of timed samples (lab/measure/hold.py): one thread spins until the
// host, having enqueued every sample of the block behind it, sets a flag in host-mapped memory.
// It replaces a fixed GPU sleep (torch.cuda._sleep): a sleep long enough for the slowest host
// enqueue wastes most of itself on a fast one, and a too short one lets the GPU wait on the host
// inside a timed region. The same idea as nvbench's blocking kernel; the timeout keeps a host
// that never releases from hanging the stream, and is reported so the block can be retaken.
#include <cuda_runtime.h>

namespace {

__global__ void block_until_released(const volatile int* release, volatile int* timed_out, long long timeout_cycles) {
  const long long start = clock64();
  while (*release == 0) {
    if (clock64() - start > timeout_cycles) {
      *timed_out = 1;
      return;
    }
  }
}

}  // namespace

extern "C" {

// Two host-mapped ints: flags[0] the release the host sets, flags[1] the timeout the kernel sets.
int lab_hold_alloc(int** host_flags) {
  cudaError_t err = cudaHostAlloc(reinterpret_cast<void**>(host_flags), 2 * sizeof(int), cudaHostAllocMapped);
  if (err == cudaSuccess) {
    (*host_flags)[0] = 0;
    (*host_flags)[1] = 0;
  }
  return static_cast<int>(err);
}

int lab_hold_free(int* host_flags) { return static_cast<int>(cudaFreeHost(host_flags)); }

// Enqueue the hold on `stream`; the host then enqueues its samples and sets host_flags[0] = 1.
int lab_hold_enqueue(int* host_flags, long long timeout_cycles, cudaStream_t stream) {
  int* device_flags = nullptr;
  cudaError_t err = cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags), host_flags, 0);
  if (err != cudaSuccess) return static_cast<int>(err);
  block_until_released<<<1, 1, 0, stream>>>(device_flags, device_flags + 1, timeout_cycles);
  return static_cast<int>(cudaGetLastError());
}

}  // extern "C"
