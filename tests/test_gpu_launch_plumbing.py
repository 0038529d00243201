"""GPU test of the launch plumbing every variant shares (kernels/include/fa/common.cuh): each kernel
raises its own shared-memory limit, also where two kernels of one library share a Tile type and a
signature (step 35's prepared two-warpgroup tile and the no_two_ctas_per_sm knock-out's D = 64 tile
did: the opt-in flag was one per template instance, so the second kernel launched without it and
failed with cudaErrorInvalidValue)."""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import pytest

from lab.kernels import build

pytestmark = pytest.mark.gpu

# Two kernels with one signature and one Tile type, each needing 100 KB of dynamic shared memory
# (above the 48 KB a kernel gets without opting in), launched in turn through fa::launch.
SOURCE = r'''
#include "fa/common.cuh"

struct BigTile {
  static constexpr int BR = 64, THREADS = 128;
  static constexpr size_t SMEM = 100 * 1024;
  static constexpr size_t smem_bytes() { return SMEM; }
};

template <int SLOT>
__global__ void write_slot(float* out, fa::AttnShape) {
  extern __shared__ float staged[];
  const int last = BigTile::SMEM / sizeof(float) - 1;  // the far end of the 100 KB
  if (threadIdx.x == 0) staged[last] = SLOT + 1.0f;
  __syncthreads();
  if (threadIdx.x == 0 && blockIdx.x == 0) out[SLOT] = staged[last];
}

extern "C" int launch_both(float* out) {
  const fa::AttnShape shape{1, 1, 64, 1.0f, 0, 1};
  if (int err = fa::launch<BigTile>(write_slot<0>, shape, nullptr, out)) return err;
  if (int err = fa::launch<BigTile>(write_slot<1>, shape, nullptr, out)) return err;
  return static_cast<int>(cudaDeviceSynchronize());
}
'''


def launch_both(tmp_path: Path, include_dir: Path | str = build.INCLUDE_DIR) -> tuple[int, list[float]]:
    """Build SOURCE against `include_dir` for this GPU, run it: (its cudaError_t, the two slots)."""
    import torch

    major, minor = torch.cuda.get_device_capability()
    src, lib_path = tmp_path / "two_kernels.cu", tmp_path / "two_kernels.so"
    src.write_text(SOURCE)
    subprocess.run([build.nvcc_path(), "-shared", "-Xcompiler", "-fPIC", f"-arch=sm_{major}{minor}", "-O1",
                    "-std=c++17", f"-I{include_dir}", "-o", str(lib_path), str(src)], check=True, capture_output=True)
    lib = ctypes.CDLL(str(lib_path))
    out = torch.full((2,), -1.0, device="cuda")
    torch.cuda.synchronize()
    err = lib.launch_both(ctypes.c_void_p(out.data_ptr()))
    return err, out.cpu().tolist()


def test_two_kernels_sharing_a_tile_type_each_opt_in(tmp_path):
    err, slots = launch_both(tmp_path)
    assert err == 0, f"the second kernel's launch failed: cudaError_t {err}"
    assert slots == [1.0, 2.0]
