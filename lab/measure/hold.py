"""The hold in front of a block of timed samples: a one-thread kernel (kernels/measure/
block_until_released.cu) that spins until the host, having enqueued the whole block behind it,
releases it through a flag in host-mapped memory (nvbench's blocking kernel).

It replaces a fixed GPU sleep: the sleep had to be long enough for the slowest host enqueue
(a block of nine cold samples of flex_attention) and so idled the GPU on every fast one (a
block of hot graph replays is enqueued in a tenth of it), about 1 ms a block on some 10 000
blocks a replicate; and nothing proved the host had finished inside it. With the hold the GPU
starts the block exactly when the host is done, so every sample is already queued when it runs.

The library is built once per (source, nvcc, architecture) under build/measure/ with plain nvcc
(a few seconds); `available()` says whether it could be, and lab.measure.timing falls back to the
fixed sleep, with a warning, where it cannot.
"""

from __future__ import annotations

import ctypes
import hashlib
import warnings
from functools import cache
from pathlib import Path

from lab.kernels.manifest import KERNELS_DIR, REPO

SOURCE = KERNELS_DIR / "measure" / "block_until_released.cu"
BUILD_ROOT = REPO / "build" / "measure"
# A block whose host has not released the hold within this time is retaken (lab.measure.timing):
# its first samples may have run before the host finished enqueuing the last. Far above any
# block's enqueue (a few ms at most), far below anything a user would take for a hang.
TIMEOUT_S = 0.25
# clock64 counts SM cycles; converted at 2.1 GHz, above every part's boost clock, so the timeout
# is never shorter than TIMEOUT_S.
CYCLES_PER_S = 2.1e9


def nvcc_command(arch: str, out: Path) -> list[str]:
    """The nvcc call that builds the hold's library for compute capability `arch` ('9.0')."""
    from lab.kernels.build import nvcc_path

    sm = arch.replace(".", "")
    return [nvcc_path(), "-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", f"-arch=sm_{sm}", "-o", str(out),
            str(SOURCE)]


def library_path(arch: str) -> Path:
    """Where the library for `arch` lives: keyed by the source, nvcc's version and the architecture."""
    from lab.kernels.build import nvcc_version

    key = hashlib.sha256("\0".join([SOURCE.read_text(), nvcc_version(), arch]).encode()).hexdigest()[:16]
    return BUILD_ROOT / f"hold-{key}" / "libhold.so"


def build(arch: str | None = None) -> Path:
    """Build (or find) the library; raises RuntimeError with nvcc's output if it does not compile."""
    from lab.kernels.build import compile_once, device_arch

    arch = arch or device_arch()
    return compile_once(library_path(arch), lambda out: nvcc_command(arch, out), str(SOURCE.relative_to(REPO)))


class Hold:
    """One hold (its pair of host-mapped flags), reused block after block by one process."""

    def __init__(self, library: Path):
        lib = ctypes.CDLL(str(library))
        lib.lab_hold_alloc.argtypes = [ctypes.POINTER(ctypes.POINTER(ctypes.c_int))]
        lib.lab_hold_free.argtypes = [ctypes.POINTER(ctypes.c_int)]
        lib.lab_hold_enqueue.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_longlong, ctypes.c_void_p]
        self._lib = lib
        self.flags = ctypes.POINTER(ctypes.c_int)()
        if err := lib.lab_hold_alloc(ctypes.byref(self.flags)):
            raise RuntimeError(f"cudaHostAlloc of the hold's flags failed with cudaError {err}")
        self.timeout_cycles = int(TIMEOUT_S * CYCLES_PER_S)

    def enqueue(self, stream: int) -> None:
        """Hold `stream` (a cudaStream_t) until release(). The previous block's hold has finished:
        timed_blocks synchronizes on its last event before it returns."""
        self.flags[0] = 0
        self.flags[1] = 0
        if err := self._lib.lab_hold_enqueue(self.flags, self.timeout_cycles, stream):
            raise RuntimeError(f"the hold kernel did not launch: cudaError {err}")

    def release(self) -> None:
        self.flags[0] = 1

    def timed_out(self) -> bool:
        """Whether the last hold gave up waiting (read after the block has been synchronized)."""
        return bool(self.flags[1])


@cache
def default() -> Hold | None:
    """This process's hold, built on first use; None (with a warning) where it cannot be built or
    loaded, and lab.measure.timing then enqueues a fixed GPU sleep instead."""
    try:
        return Hold(build())
    except Exception as exc:  # noqa: BLE001 - the sleep still times correctly, only less efficiently
        warnings.warn(f"lab.measure.hold unavailable ({type(exc).__name__}: {str(exc)[:300]}); blocks of samples "
                      "wait behind a fixed GPU sleep instead", RuntimeWarning, stacklevel=2)
        return None


def kind() -> str:
    """What holds a block of samples in this process: 'blocking kernel' or 'sleep' (recorded with a run)."""
    return "blocking kernel" if default() is not None else "sleep"
