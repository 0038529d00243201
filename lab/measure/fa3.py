"""FlashAttention-3 (Dao-AILab's Hopper kernels) as a peer: the forward compiled in the pinned wheel
dew-flash-attn-cu13 (requirements-peers.txt), called through its XLA FFI handler by a small shim
(kernels/peers/fa3_ffi_call.cc) on torch's current stream, so it is timed, and captured in CUDA graphs,
as every other peer is. `shim()` finds the library, builds the shim and checks the handler's API
version; lab.measure.peers calls it before it lists the peer, and records why where it fails.

    make peers                          # fetch the wheel (pinned by hash), keep the library in .fa3/
    flash_attn_func(q, k, v, softmax_scale, causal) -> (out, lse)   # q, k, v contiguous [B, S, H, D]

Where the library is: LAB_FA3_LIBRARY, else .fa3/libdew_flash_attn3.so, else .fa3/libdew_flash_attn3.so.xz
(under 1 MB, what travels to a GPU machine; decompressed once under build/peers/).

Before the first call the handler is asked which XLA FFI API version it was built against, and refused
outside what XLA's own runtime calls (0.1 up to the shim's header, third_party/xla_ffi/c_api.h, 0.4: the
wheel's handler says 0.1); the handler itself refuses a call frame of another size and decodes every buffer and attribute by type and name, so a layout mismatch is an error
naming what did not match, never a launch on garbage (tests/test_fa3_peer.py, with a stand-in built on
XLA's own binding).
"""

from __future__ import annotations

import ctypes
import hashlib
import lzma
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

from lab.kernels.manifest import KERNELS_DIR, REPO

PACKAGE, VERSION = "dew-flash-attn-cu13", "0.3.6"
LIBRARY_NAME = "libdew_flash_attn3.so"
HANDLER = "dew_flash3_mha_fwd"
SOURCE = KERNELS_DIR / "peers" / "fa3_ffi_call.cc"
HEADERS = REPO / "third_party" / "xla_ffi"
FETCHED = REPO / ".fa3"  # what `make peers` (or ../shared/anchors/fa3-binary.sh) leaves; ignored by git
BUILD_ROOT = REPO / "build" / "peers"
HEAD_DIMS = (64, 128, 192, 256)  # what the wheel was compiled for (a narrower head is padded by the wheel's
# own Python wrapper, which this peer does not use: it takes these only)
DTYPE_CODES = {"float16": 10, "bfloat16": 16}  # XLA_FFI_DataType F16, BF16
ARENA_BYTES = 1 << 20  # scratch for the handler to start with; grown (outside timing) where it asks for more
MESSAGE = 2048
MIN_API_VERSION = (0, 1)  # the oldest handler XLA's runtime calls (and so this shim)


class Fa3Error(RuntimeError):
    """The FFI handler (or the shim) refused a call: its message."""


def library_path() -> Path:
    """The FA3 library to load; FileNotFoundError naming how to get it where there is none."""
    if env := os.environ.get("LAB_FA3_LIBRARY"):
        if not Path(env).is_file():
            raise FileNotFoundError(f"LAB_FA3_LIBRARY={env}: no such file")
        return Path(env)
    plain, packed = FETCHED / LIBRARY_NAME, FETCHED / (LIBRARY_NAME + ".xz")
    if plain.is_file():
        return plain
    if packed.is_file():
        data = packed.read_bytes()
        out = BUILD_ROOT / f"lib-{hashlib.sha256(data).hexdigest()[:16]}" / LIBRARY_NAME
        if not out.is_file():
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = out.with_name(f".{LIBRARY_NAME}.{os.getpid()}")
            tmp.write_bytes(lzma.decompress(data))
            tmp.replace(out)
        return out
    raise FileNotFoundError(f"no {LIBRARY_NAME} in {FETCHED.relative_to(REPO)}/ (run `make peers`, or set "
                            "LAB_FA3_LIBRARY)")


def compiler() -> str:
    return os.environ.get("CXX", "c++")


def shim_command(out: Path) -> list[str]:
    return [compiler(), "-std=c++17", "-O2", "-shared", "-fPIC", "-I", str(HEADERS), "-o", str(out), str(SOURCE), "-ldl"]


def build_shim() -> Path:
    """The shim's library, built once per (source, headers, compiler) under build/peers/."""
    version = subprocess.run([compiler(), "--version"], capture_output=True, text=True).stdout
    key = hashlib.sha256("\0".join([SOURCE.read_text(), (HEADERS / "xla/ffi/api/c_api.h").read_text(),
                                    version]).encode()).hexdigest()[:16]
    from lab.kernels.build import compile_once

    return compile_once(BUILD_ROOT / f"fa3call-{key}" / "libfa3call.so", shim_command, str(SOURCE.relative_to(REPO)))


class Shim:
    """The shim's library with one FFI handler opened through it."""

    def __init__(self, shim: Path, library: Path, symbol: str = HANDLER):
        lib = ctypes.CDLL(str(shim))
        lib.lab_fa3_open.restype = ctypes.c_void_p
        lib.lab_fa3_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.lab_fa3_shim_version.argtypes = [ctypes.POINTER(ctypes.c_int)] * 2
        lib.lab_fa3_api_version.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                                            ctypes.POINTER(ctypes.c_uint), ctypes.c_char_p, ctypes.c_size_t]
        lib.lab_fa3_forward.argtypes = ([ctypes.c_void_p, ctypes.c_int] + [ctypes.c_void_p] * 7
                                        + [ctypes.c_int64] * 5 + [ctypes.c_double, ctypes.c_int, ctypes.c_int64,
                                                                  ctypes.c_int64, ctypes.c_void_p, ctypes.c_int,
                                                                  ctypes.c_void_p, ctypes.c_size_t,
                                                                  ctypes.POINTER(ctypes.c_size_t), ctypes.c_char_p,
                                                                  ctypes.c_size_t])
        self._lib = lib
        message = ctypes.create_string_buffer(MESSAGE)
        self.handler = lib.lab_fa3_open(str(library).encode(), symbol.encode(), message, MESSAGE)
        if not self.handler:
            raise Fa3Error(f"{library}: {message.value.decode(errors='replace')}")
        self.library = library

    def shim_version(self) -> tuple[int, int]:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._lib.lab_fa3_shim_version(ctypes.byref(major), ctypes.byref(minor))
        return major.value, minor.value

    def handler_version(self) -> tuple[int, int]:
        """The XLA FFI API version the handler was built against (its metadata); Fa3Error if it refuses."""
        major, minor, traits = ctypes.c_int(), ctypes.c_int(), ctypes.c_uint()
        message = ctypes.create_string_buffer(MESSAGE)
        if code := self._lib.lab_fa3_api_version(self.handler, ctypes.byref(major), ctypes.byref(minor),
                                                 ctypes.byref(traits), message, MESSAGE):
            raise Fa3Error(f"the FFI handler refused the metadata query (code {code}): "
                           f"{message.value.decode(errors='replace')}")
        return major.value, minor.value

    def check_version(self) -> tuple[int, int]:
        """The handler's API version where the shim may call it, else Fa3Error naming both: XLA's own
        rule (its handler registry, xla/ffi/ffi_registry.cc): at least MIN_API_VERSION and at most the
        version the caller was built against, since the API only grows (a handler built against 0.1
        calls the functions 0.1 had, which a 0.4 API table holds at the same places)."""
        mine, theirs = self.shim_version(), self.handler_version()
        if not MIN_API_VERSION <= theirs <= mine:
            raise Fa3Error(f"{self.library.name}'s FFI handler was built against XLA FFI API {theirs[0]}.{theirs[1]}; "
                           f"the shim (third_party/xla_ffi, {mine[0]}.{mine[1]}) calls handlers of "
                           f"{MIN_API_VERSION[0]}.{MIN_API_VERSION[1]} to {mine[0]}.{mine[1]}, as XLA does: not called")
        return theirs

    def forward(self, dtype: int, pointers: tuple, dims: tuple, scale: float, causal: bool, window: tuple[int, int],
                stream: int, device: int, arena: tuple[int, int]) -> tuple[int, str, int]:
        """One call: (code, message, scratch bytes wanted). pointers: q, k, v, out, lse, accum, lse_accum;
        dims: B, S, H, H_kv, D; arena: (pointer, bytes)."""
        message = ctypes.create_string_buffer(MESSAGE)
        wanted = ctypes.c_size_t()
        code = self._lib.lab_fa3_forward(self.handler, dtype, *pointers, *dims, float(scale), int(causal),
                                         window[0], window[1], stream, device, arena[0], arena[1],
                                         ctypes.byref(wanted), message, MESSAGE)
        return code, message.value.decode(errors="replace"), wanted.value


@cache
def shim() -> Shim:
    s = Shim(build_shim(), library_path())
    s.check_version()
    return s


def probe() -> Shim:
    """What lab.measure.peers asks before it lists the peer: an sm90 GPU (the library holds sm90a code
    only), the library, the shim and the handler's API version; an exception says which is missing."""
    import torch

    if torch.cuda.is_available() and torch.cuda.get_device_capability() != (9, 0):
        major, minor = torch.cuda.get_device_capability()
        raise RuntimeError(f"FlashAttention-3's kernels are built for sm90a; this GPU is sm_{major}{minor}")
    return shim()


def describe() -> str:
    """Where this peer's kernels come from, for the run's records and the report."""
    lib = library_path()
    digest = hashlib.sha256(lib.read_bytes()).hexdigest()[:12]
    s = shim()
    (major, minor), (h_major, h_minor) = s.shim_version(), s.handler_version()
    return (f"{PACKAGE} {VERSION} ({LIBRARY_NAME} sha256 {digest}...), FlashAttention-3's sm90a forward called "
            f"through its XLA FFI handler (built against API {h_major}.{h_minor}; the shim's {major}.{minor}) on "
            "torch's stream")


_arenas: dict = {}  # device index -> a torch uint8 tensor the handler's scratch comes from


def _arena(device, at_least: int = ARENA_BYTES):
    import torch

    have = _arenas.get(device.index)
    if have is None or have.numel() < at_least:
        size = max(ARENA_BYTES, 1 << (max(at_least, 1) - 1).bit_length())
        _arenas[device.index] = have = torch.empty(size, dtype=torch.uint8, device=device)
    return have


def flash_attn_func(q, k, v, softmax_scale: float | None = None, causal: bool = False):
    """FlashAttention-3's forward of contiguous [B, S, H, D] q and [B, S, H_kv, D] k, v (fp16 or bf16, on
    an sm90 GPU): (out [B, S, H, D], lse [B, H, S] float32)."""
    import torch

    B, S, H, D = q.shape
    H_kv = k.shape[2]
    dtype = DTYPE_CODES.get(str(q.dtype).removeprefix("torch."))
    problems = ([f"dtype {q.dtype}: FA3 takes float16 and bfloat16"] if dtype is None else []) \
        + ([f"head dim {D}: this build takes {', '.join(map(str, HEAD_DIMS))}"] if D not in HEAD_DIMS else []) \
        + ([f"{H} query heads over {H_kv} K/V heads: they must divide"] if H % H_kv else []) \
        + ([f"k and v {tuple(k.shape)}, {tuple(v.shape)}: expected ({B}, {S}, {H_kv}, {D}) both"]
           if tuple(k.shape) != (B, S, H_kv, D) or tuple(v.shape) != tuple(k.shape) else []) \
        + (["q, k and v must be contiguous [B, S, H, D] CUDA tensors of one dtype"]
           if not all(t.is_cuda and t.is_contiguous() and t.dtype == q.dtype for t in (q, k, v)) else [])
    if problems:
        raise ValueError("; ".join(problems))
    scale = float(softmax_scale) if softmax_scale is not None else D ** -0.5
    out = torch.empty_like(q)
    lse = torch.empty((B, H, S), dtype=torch.float32, device=q.device)
    accum = torch.empty(4, dtype=torch.float32, device=q.device)
    s = shim()
    stream = torch.cuda.current_stream(q.device).cuda_stream
    arena = _arena(q.device)
    pointers = (q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), lse.data_ptr(), accum.data_ptr(),
                accum.data_ptr())
    window = (-1, -1)  # no sliding window (the wheel's own default); is_causal alone makes the call causal
    code, message, wanted = s.forward(dtype, pointers, (B, S, H, H_kv, D), scale, causal, window, stream,
                                      q.device.index, (arena.data_ptr(), arena.numel()))
    if code and wanted > arena.numel():  # its scratch did not fit: grow the arena, call again
        arena = _arena(q.device, wanted)
        code, message, wanted = s.forward(dtype, pointers, (B, S, H, H_kv, D), scale, causal, window, stream,
                                          q.device.index, (arena.data_ptr(), arena.numel()))
    if code:
        raise Fa3Error(f"FlashAttention-3's handler returned error code {code}: {message}")
    return out, lse


# FA3's forward kernel is FlashAttnFwdSm90<CollectiveMainloopFwdSm90<Stages, ClusterShape, TileShape (M, N, D),
# head dim of V, Element, float, Sm90, then these flags in this order> (FA3's hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp).
MAINLOOP_FLAGS = ("causal", "local", "softcap", "varlen", "paged_kv_non_tma", "append_kv", "has_qv", "pv_from_registers",
                  "intra_wg_overlap", "pack_gqa", "split", "v_colmajor")
_MAINLOOP = re.compile(r"CollectiveMainloopFwdSm90<(\d+), cute::tuple<[^<>]*(?:<[^<>]*>[^<>]*)*>, cute::tuple<"
                       r"cute::C<(\d+)>, cute::C<(\d+)>, cute::C<(\d+)> >, (\d+), cutlass::(\w+), float, "
                       r"cutlass::arch::Sm90, ((?:true|false)(?:, (?:true|false))*)>")
ELEMENTS = {"half_t": "float16", "bfloat16_t": "bfloat16"}


def forward_kernels(demangled: list[str]) -> list[dict]:
    """FA3's forward kernels among demangled kernel names: per kernel its index in the list, stages, tile
    (rows, keys), head dim, dtype and MAINLOOP_FLAGS; names of other kernels are left out."""
    out = []
    for i, name in enumerate(demangled):
        m = _MAINLOOP.search(name)
        if not m or "FlashAttnFwdSm90<" not in name:
            continue
        flags = [f == "true" for f in m.group(7).split(", ")]
        if len(flags) != len(MAINLOOP_FLAGS):
            raise ValueError(f"FA3 kernel {i}: {len(flags)} mainloop flags, not {len(MAINLOOP_FLAGS)}: another "
                             "FA3 version than this reading knows")
        out.append({"index": i, "stages": int(m.group(1)), "rows": int(m.group(2)), "keys": int(m.group(3)),
                    "head_dim": int(m.group(4)), "dtype": ELEMENTS.get(m.group(6), m.group(6)),
                    **dict(zip(MAINLOOP_FLAGS, flags))})
    return out


def plain_forward_kernel(kernels: list[dict], head_dim: int, causal: bool, dtype: str = "float16") -> dict:
    """The forward kernel FA3 runs for a plain batch (no varlen, local window, softcap, paged or appended K/V,
    packed GQA or split) of this head dim, mask and dtype; ValueError where not exactly one matches."""
    plain = {f: False for f in ("local", "softcap", "varlen", "paged_kv_non_tma", "append_kv", "has_qv", "pack_gqa",
                                "split", "v_colmajor")}
    hits = [k for k in kernels if k["head_dim"] == head_dim and k["causal"] == causal and k["dtype"] == dtype
            and all(k[f] == v for f, v in plain.items())]
    if len(hits) != 1:
        raise ValueError(f"{len(hits)} FA3 forward kernels for head dim {head_dim}, causal {causal}, {dtype}")
    return hits[0]


def fetch() -> int:
    """`make peers`: the pinned wheel (requirements-peers.txt, by hash) into build/peers/wheel, and its
    FA3 library into .fa3/, compressed (.xz, under 1 MB: what goes to a GPU machine with the tree)."""
    import zipfile

    wheel_dir = BUILD_ROOT / "wheel"
    wheel_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--require-hashes",
                    "-r", str(REPO / "requirements-peers.txt"), "-d", str(wheel_dir)], check=True)
    wheel = next(wheel_dir.glob(f"{PACKAGE.replace('-', '_')}-{VERSION}-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        data = z.read(f"dew_flash_attn/{LIBRARY_NAME}")
    FETCHED.mkdir(exist_ok=True)
    (FETCHED / (LIBRARY_NAME + ".xz")).write_bytes(lzma.compress(data, preset=9))
    print(f"{FETCHED / (LIBRARY_NAME + '.xz')}: {LIBRARY_NAME} of {wheel.name} (sha256 "
          f"{hashlib.sha256(data).hexdigest()})")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["fetch"]:
        sys.exit(fetch())
    print(describe())
