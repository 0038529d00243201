"""FlashAttention-3 as a peer (lab.measure.fa3): the shim's call frames (kernels/peers/fa3_ffi_call.cc)
decoded by a stand-in handler built on XLA's own FFI binding (tests/peers/ffi_stand_in.cc, the real
handler's signature), without a GPU: every buffer, dimension and attribute arrives as sent, the
stream and device are the caller's, scratch comes from the caller's arena, the handler's errors come
back with their message, and a handler built against another API version is refused before any call."""

import ctypes
import subprocess

import numpy as np
import pytest

from lab.kernels.manifest import REPO
from lab.measure import fa3, peers

STAND_IN = REPO / "tests" / "peers" / "ffi_stand_in.cc"


class Seen(ctypes.Structure):
    _fields_ = [("stream", ctypes.c_void_p), ("device", ctypes.c_int32), ("dtype", ctypes.c_int32),
                ("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p),
                ("q_dims", ctypes.c_int64 * 4), ("kv_dims", ctypes.c_int64 * 4), ("lse_dims", ctypes.c_int64 * 3),
                ("scale", ctypes.c_double), ("causal", ctypes.c_int32), ("window_left", ctypes.c_int64),
                ("window_right", ctypes.c_int64), ("scratch", ctypes.c_void_p), ("calls", ctypes.c_int32)]


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory):
    out = tmp_path_factory.mktemp("ffi") / "libstandin.so"
    proc = subprocess.run([fa3.compiler(), "-std=c++17", "-O1", "-w", "-shared", "-fPIC", "-I", str(fa3.HEADERS),
                           "-o", str(out), str(STAND_IN)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    seen = ctypes.CDLL(str(out))
    seen.stand_in_seen.restype = ctypes.POINTER(Seen)
    return out, seen.stand_in_seen().contents


@pytest.fixture(scope="module")
def shim_path():
    return fa3.build_shim()


def _call(shim, seen, scale=0.125, causal=True, arena_bytes=1 << 16, dims=(2, 16, 4, 2, 64)):
    B, S, H, H_kv, D = dims
    rng = np.random.default_rng(0)
    q = rng.standard_normal((B, S, H, D)).astype(np.float16)
    k = rng.standard_normal((B, S, H_kv, D)).astype(np.float16)
    v = rng.standard_normal((B, S, H_kv, D)).astype(np.float16)
    out = np.zeros_like(q)
    lse = np.zeros((B, H, S), np.float32)
    accum = np.zeros(4, np.float32)
    arena = np.zeros(arena_bytes, np.uint8)
    ptr = lambda a: a.ctypes.data  # noqa: E731
    code, message, wanted = shim.forward(10, (ptr(q), ptr(k), ptr(v), ptr(out), ptr(lse), ptr(accum), ptr(accum)),
                                         dims, scale, causal, (-1, -1), 0xBEEF00, 3, (ptr(arena), arena.nbytes))
    return code, message, wanted, dict(q=q, k=k, v=v, out=out, lse=lse, arena=arena)


def test_the_handler_decodes_every_buffer_and_attribute_as_sent(stand_in, shim_path):
    lib, seen = stand_in
    shim = fa3.Shim(shim_path, lib, "stand_in_fwd")
    assert shim.check_version() == shim.shim_version() == (0, 4)
    code, message, wanted, t = _call(shim, seen)
    assert (code, message) == (0, "")
    assert seen.stream == 0xBEEF00 and seen.device == 3 and seen.dtype == 10  # XLA's F16
    assert (seen.q, seen.k, seen.v) == (t["q"].ctypes.data, t["k"].ctypes.data, t["v"].ctypes.data)
    assert list(seen.q_dims) == [2, 16, 4, 64] and list(seen.kv_dims) == [2, 16, 2, 64]
    assert list(seen.lse_dims) == [2, 4, 16]
    assert seen.scale == 0.125 and seen.causal == 1 and (seen.window_left, seen.window_right) == (-1, -1)
    assert np.array_equal(t["out"], t["q"]) and t["lse"].ravel()[0] == np.float32(0.125)
    # scratch from the caller's arena, aligned, and what it asked for reported back
    start = seen.scratch - t["arena"].ctypes.data
    assert 0 <= start and start % 256 == 0 and start + 4096 <= t["arena"].nbytes and wanted == start + 4096
    _call(shim, seen, causal=False)
    assert seen.causal == 0


def test_the_handlers_errors_come_back_with_their_message(stand_in, shim_path):
    lib, seen = stand_in
    shim = fa3.Shim(shim_path, lib, "stand_in_fwd")
    code, message, _, _ = _call(shim, seen, scale=-1.0)
    assert code == 3 and "negative softmax_scale" in message  # XLA's INVALID_ARGUMENT
    # an arena too small: XLA's ScratchAllocator turns the shim's refusal into no memory, and the handler
    # fails its own way (FA3: "Failed to allocate scratch memory"); the size it wanted comes back, which
    # is what flash_attn_func grows the arena to before it calls again
    code, message, wanted, _ = _call(shim, seen, arena_bytes=1000)
    assert code != 0 and "no scratch" in message and wanted == 4096


def test_handlers_of_api_versions_xla_calls_are_called_and_others_refused(stand_in, shim_path):
    """XLA's runtime calls handlers built against 0.1 up to its own version (the wheel's is 0.1, the
    shim's header 0.4); a handler older than 0.1, newer than the shim or of another major is refused."""
    lib, _ = stand_in
    assert fa3.Shim(shim_path, lib, "stand_in_v0_1").check_version() == (0, 1)
    for symbol, version in (("stand_in_v0_0", "0.0"), ("stand_in_v0_5", "0.5"), ("stand_in_v1_0", "1.0")):
        with pytest.raises(fa3.Fa3Error, match=rf"built against XLA FFI API {version}; the shim .* calls handlers of "
                                               r"0\.1 to 0\.4"):
            fa3.Shim(shim_path, lib, symbol).check_version()
    with pytest.raises(fa3.Fa3Error, match="undefined symbol"):
        fa3.Shim(shim_path, lib, "no_such_handler")


def test_without_the_library_the_peer_is_absent_and_says_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setenv("LAB_FA3_LIBRARY", str(tmp_path / "missing.so"))
    fa3.shim.cache_clear()
    found, status = peers.resolve(["flash_attn3"])
    assert found == [] and not status["flash_attn3"]["available"]
    assert "LAB_FA3_LIBRARY" in status["flash_attn3"]["reason"] and "no such file" in status["flash_attn3"]["reason"]
    monkeypatch.delenv("LAB_FA3_LIBRARY")
    monkeypatch.setattr(fa3, "FETCHED", tmp_path)
    fa3.shim.cache_clear()
    _, status = peers.resolve(["flash_attn3"])
    assert "make peers" in status["flash_attn3"]["reason"]
    fa3.shim.cache_clear()


def test_inputs_it_cannot_take_are_refused_before_any_call():
    torch = pytest.importorskip("torch")
    q = torch.zeros(1, 8, 4, 96, dtype=torch.float32)
    with pytest.raises(ValueError) as err:
        fa3.flash_attn_func(q, torch.zeros(1, 8, 3, 96), torch.zeros(1, 8, 3, 96))
    text = str(err.value)
    assert "dtype torch.float32" in text and "head dim 96" in text and "4 query heads over 3 K/V heads" in text
    assert "contiguous [B, S, H, D] CUDA tensors" in text


# --- on a GPU with the library (lab.measure.fa3: `make peers`, or .fa3/ carried to the machine) -------------


def _fa3_or_skip():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("FlashAttention-3's kernels are built for sm90a: no such GPU visible")
    try:
        return torch, peers.get("flash_attn3")
    except ValueError as exc:
        pytest.skip(str(exc))


@pytest.mark.gpu
def test_gpu_fa3_passes_the_peers_grid():
    """The peers' correctness grid (fp16 and bf16, MHA, GQA and MQA, causal and not, a custom scale), by
    the variants' rule; at least one case of every kind runs (the library takes head dims 64 and 128)."""
    from lab.measure import check

    _fa3_or_skip()
    results = list(check.run_grid({"flash_attn3": check.peer_as_attn(peers.get("flash_attn3"))}, check.peer_grid()))
    ran = [r for r in results if not r.unsupported]
    assert ran and not [r.explain() for r in ran if r.failed]
    assert {r.dtype for r in ran} >= {"fp16", "bf16"} and any(r.H_kv == 1 for r in ran)


@pytest.mark.gpu
def test_gpu_fa3_replays_in_a_cuda_graph_on_a_side_stream():
    """Captured on a side stream (as the hot timer captures), replayed: the launch went to the captured
    stream (a launch on another stream would leave the graph empty and out untouched)."""
    torch, peer = _fa3_or_skip()
    q, k, v = (torch.randn(2, 4, 1024, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    k, v = k[:, :2].contiguous(), v[:, :2].contiguous()
    launch = peer.bind(q, k, v, True, None)
    eager = peer.output_bhsd(launch()).clone()
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        launch()
        torch.cuda.synchronize()
        with torch.cuda.graph(graph, stream=stream):
            raw = launch()
    out = peer.output_bhsd(raw)
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, eager)
