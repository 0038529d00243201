"""CPU tests of the peer registry: absent peers recorded, a peer that raises recorded as
unsupported (never escaping the timing code), the layouts of the registered external peers, the
correctness stage for peers, and flex_attention itself on the CPU."""

import dataclasses
import math
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

from lab.measure import check, peers, records
from lab.kernels.shape import Shape
from lab.studies import peer_check, profiling
from lab.studies.measure_shape import measure_shape


def _sdpa_bshd(q, k, v, softmax_scale=None, causal=False):
    """flash-attn-4's flash_attn_func signature, (B, S, H, D) in and out, returning (out, lse)."""
    out = F.scaled_dot_product_attention(*(t.transpose(1, 2) for t in (q, k, v)), is_causal=causal,
                                         scale=softmax_scale)
    return out.transpose(1, 2).contiguous(), None


def _sdpa_shd(q, k, v, causal=False, sm_scale=None, kv_layout="NHD"):
    """FlashInfer's single_prefill_with_kv_cache signature: (S, H, D) in and out, one request."""
    assert kv_layout == "NHD"
    out = F.scaled_dot_product_attention(*(t.transpose(0, 1) for t in (q, k, v)), is_causal=causal, scale=sm_scale)
    return out.transpose(0, 1).contiguous()


REGISTERED = peers.EXTERNAL  # the real table, before a test swaps in fakes


def _spec(name):
    return next(s for s in REGISTERED if s.name == name)


FAKE_MODULE = textwrap.dedent('''
    import torch.nn.functional as F

    def good(q, k, v, softmax_scale=None, causal=False):
        out = F.scaled_dot_product_attention(*(t.transpose(1, 2) for t in (q, k, v)), is_causal=causal,
                                             scale=softmax_scale)
        return out.transpose(1, 2).contiguous(), None

    def ignores_causal(q, k, v, softmax_scale=None, causal=False):
        return good(q, k, v, softmax_scale=softmax_scale, causal=False)

    def raises(q, k, v, softmax_scale=None, causal=False):
        raise RuntimeError("no kernel for this GPU\\nsecond line")
''')


@pytest.fixture
def fake_externals(tmp_path, monkeypatch):
    """Registered externals: one that imports and is right, one that ignores `causal`, one that
    raises at every shape, one whose package is not installed and one whose import raises."""
    (tmp_path / "fake_attention_lib.py").write_text(FAKE_MODULE)
    (tmp_path / "broken_attention_lib.py").write_text("raise RuntimeError('CUDA driver too old\\nmore')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    base = _spec("flash_attn_cute")
    specs = (dataclasses.replace(base, name="fake_good", package="fake", module="fake_attention_lib", function="good"),
             dataclasses.replace(base, name="fake_wrong", package="fake", module="fake_attention_lib",
                                 function="ignores_causal"),
             dataclasses.replace(base, name="fake_raises", package="fake", module="fake_attention_lib",
                                 function="raises"),
             dataclasses.replace(base, name="fake_absent", package="not-installed-pkg",
                                 module="no_such_attention_module", function="f"),
             dataclasses.replace(base, name="fake_broken", package="broken", module="broken_attention_lib",
                                 function="f"))
    monkeypatch.setattr(peers, "EXTERNAL", specs)
    return specs


def test_default_peers_are_sdpa_flex_and_every_registered_external():
    names = peers.default_names()
    assert names[:4] == ["sdpa_flash", "sdpa_efficient", "sdpa_cudnn", "sdpa_default"]
    assert "flex_attention" in names and {"flash_attn3", "flash_attn_cute", "flashinfer"} <= set(names)
    assert peers.sdpa_backends(names) == ["flash", "efficient", "cudnn", "default"]
    assert peers.is_peer("flex_attention") and not peers.is_peer("wmma")
    with pytest.raises(ValueError, match="unknown peer\\(s\\) nope; known: sdpa_flash"):
        peers.validate_names(["sdpa_flash", "nope"])
    with pytest.raises(ValueError, match="empty"):
        peers.validate_names([])


def test_a_missing_peer_is_recorded_absent_with_its_import_error(fake_externals):
    names = ["sdpa_flash", "fake_good", "fake_absent", "fake_broken"]
    assert peers.validate_names(names) == names  # asking for an absent peer is a valid parameter
    found, status = peers.resolve(names)
    assert [p.name for p in found] == ["sdpa_flash", "fake_good"]
    assert status["sdpa_flash"] == {"available": True, "reason": "", "source": f"torch {torch.__version__}"}
    assert status["fake_good"]["available"] and status["fake_good"]["source"] == "fake (version not recorded)"
    absent = status["fake_absent"]
    assert absent["available"] is False and "\n" not in absent["reason"]
    assert "not-installed-pkg not importable" in absent["reason"] and "No module named" in absent["reason"]
    broken = status["fake_broken"]  # an import that raises something else is absent too, in one line
    assert broken["available"] is False and broken["reason"].endswith("RuntimeError: CUDA driver too old")
    with pytest.raises(ValueError, match="peer fake_absent is absent: not-installed-pkg"):
        peers.get("fake_absent")


def test_a_peer_whose_probe_fails_is_absent_with_the_reason(fake_externals, monkeypatch):
    """An external that imports but cannot run here (FA3 without its library, or of another FFI API
    version: lab.measure.fa3.shim) is absent, its probe's message kept; one that passes says its source."""
    def refuse(module):
        raise RuntimeError("handler built against XLA FFI API 0.3\nmore")

    spec = dataclasses.replace(fake_externals[0], name="fake_probed", probe=refuse)
    ok = dataclasses.replace(fake_externals[0], name="fake_sourced", source=lambda module: f"from {module.__name__}")
    monkeypatch.setattr(peers, "EXTERNAL", (*fake_externals, spec, ok))
    found, status = peers.resolve(["fake_probed", "fake_sourced"])
    assert [p.name for p in found] == ["fake_sourced"] and status["fake_sourced"]["source"] == "from fake_attention_lib"
    assert status["fake_probed"] == {"available": False, "reason": "fake present but unusable (fake_attention_lib): "
                                                                  "RuntimeError: handler built against XLA FFI API 0.3"}


def test_a_peer_that_raises_is_unsupported_with_the_reason(fake_externals):
    q, k, v = (torch.randn(1, 2, 16, 64) for _ in range(3))
    raising = peers.get("fake_raises")
    assert raising.unsupported_reason(q, k, v, False, None) == "RuntimeError: no kernel for this GPU"
    assert peers.get("fake_good").unsupported_reason(q, k, v, True, None) is None
    flashinfer = peers.ExternalPeer(_spec("flashinfer"), _sdpa_shd)
    why = flashinfer.unsupported_reason(torch.randn(2, 2, 16, 64), k, v, False, None)
    assert why.startswith("ValueError: B = 2") and "B = 1 only" in why


def _cpu_measure_shape(monkeypatch, peer_list):
    """measure_shape on the CPU: inputs on the CPU, timers that launch each closure once."""
    from lab.measure import timing

    real_randn = torch.randn
    monkeypatch.setattr(torch, "randn", lambda *a, device=None, **kw: real_randn(*a, **kw))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda *a: None)
    monkeypatch.setattr(timing, "l2_bytes", lambda: 1 << 30)

    class OnceTimer:
        def __init__(self, launches):
            for launch in launches:
                launch()

    def interleave(timers, rule, clocks=None, seed=0, context_of=None):
        return {n: {"samples": [10.0] * 5, "clock_mhz": [1980.0] * 5, "throttled": [False] * 5, "stopped_by": "ci"}
                for n in timers}

    monkeypatch.setattr(timing, "HotTimer", OnceTimer)
    monkeypatch.setattr(timing, "interleave", interleave)
    shape = Shape(1, 2, 32, 64, True)
    return measure_shape(shape, {}, peer_list, ["hot"], rule=None, clocks=None, run_id="r", aa_impl=None,
                             seed=0, progress=lambda s: None)


def test_measure_shape_records_a_raising_peer_and_times_the_others(monkeypatch, fake_externals):
    class FailsWhenTimed(peers.Peer):
        """Passes the support probe, then raises inside the timer (a capture that fails)."""
        name = "fails_when_timed"
        calls = 0

        def bind(self, q, k, v, causal, scale):
            def launch():
                FailsWhenTimed.calls += 1
                if FailsWhenTimed.calls > 1:
                    raise RuntimeError("operation not permitted when stream is capturing")
            return launch

    peer_list = [peers.SdpaPeer("default"), peers.get("fake_raises"), FailsWhenTimed(), peers.get("fake_good")]
    samples, summary, notes = _cpu_measure_shape(monkeypatch, peer_list)
    assert notes["unsupported"] == {"fake_raises": "RuntimeError: no kernel for this GPU"}
    assert notes["errors"] == {"fails_when_timed/hot": "RuntimeError: operation not permitted when stream is capturing"}
    assert sorted({r["impl"] for r in summary}) == ["fake_good", "sdpa_default"]
    assert len(samples) == 10


def test_registered_external_layouts_match_the_reference():
    """The registered entries' own prepare/call/to_bhsd, with a stand-in for the library function
    (its documented signature and layout), judged by lab.measure.check's rule on the CPU."""
    refs = check.ReferenceCache(device="cpu")
    cute = check.peer_as_attn(peers.ExternalPeer(_spec("flash_attn_cute"), _sdpa_bshd))
    flashinfer = check.peer_as_attn(peers.ExternalPeer(_spec("flashinfer"), _sdpa_shd))
    for case in (check.Case(2, 3, 17, 64, True), check.Case(2, 3, 33, 128, False, check.CUSTOM_SCALE)):
        r = check.check_case("flash_attn_cute", cute, case, refs)
        assert r.passed, r.explain()
    one = check.check_case("flashinfer", flashinfer, check.Case(1, 3, 17, 64, True), refs)
    assert one.passed, one.explain()
    two = check.check_case("flashinfer", flashinfer, check.Case(2, 3, 17, 64, True), refs)
    assert not two.passed and "B = 1 only" in two.unsupported and "unsupported" in two.explain()


def test_a_peer_output_of_the_wrong_layout_fails_instead_of_broadcasting():
    wrong = dataclasses.replace(_spec("flash_attn_cute"), to_bhsd=lambda raw: raw[0])  # left as (B, S, H, D)
    attn = check.peer_as_attn(peers.ExternalPeer(wrong, _sdpa_bshd))
    r = check.check_case("wrong", attn, check.Case(2, 3, 17, 64, False), check.ReferenceCache(device="cpu"))
    assert not r.passed and "returned shape (2, 17, 3, 64), expected (2, 3, 17, 64)" in r.error


def test_peers_failing_correctness_are_excluded_from_timing(tmp_path, monkeypatch, fake_externals):
    monkeypatch.setattr(records, "RUNS_DIR", tmp_path)
    rec = records.RunRecord(root=tmp_path)
    names = ["sdpa_flash", "fake_good", "fake_wrong", "fake_raises", "fake_absent"]
    rec.write_json("params.json", {"variants": [], "shapes": [], "backends": ["flash"], "peers": names})
    rec.write_json("peers.json", peers.resolve(names)[1])
    real_run_grid = check.run_grid
    monkeypatch.setattr(check, "run_grid", lambda *a, **kw: real_run_grid(*a, device="cpu", **kw))
    monkeypatch.setattr(check, "peer_grid", lambda: [check.Case(2, 3, 17, 64, c) for c in (False, True)])
    results = peer_check.check_peers(rec, progress=lambda s: None)
    assert {r.variant for r in results} == {"fake_good", "fake_wrong", "fake_raises"}  # SDPA is the reference
    status = rec.read_json("peers.json")
    assert "excluded" not in status["fake_good"] and status["fake_good"]["correctness"] == "2/2 passed, 0 unsupported"
    assert status["fake_wrong"]["excluded"].startswith(
        "failed 1 correctness cases, e.g. fake_wrong B2H3-S17-D64-causal")
    assert status["fake_raises"]["excluded"].startswith("no correctness case could run")
    assert status["fake_absent"] == {"available": False, "reason": status["fake_absent"]["reason"]}
    assert len(rec.read_json("peer_correctness.json")) == 6
    assert [p.name for p in peer_check.run_peers(rec)] == ["sdpa_flash", "fake_good"]


def _peer_run(root, names):
    rec = records.RunRecord(root=root)
    rec.write_json("params.json", {"variants": [], "shapes": [], "backends": ["flash"], "peers": names})
    rec.write_json("peers.json", peers.resolve(names)[1])
    return rec


def test_the_peers_check_shared_over_children_records_what_one_process_does(tmp_path, monkeypatch, fake_externals):
    """Two parts of the peers' grid checked by correctness_child --peers, collected by peer_check.finish, give the
    one-process check's results in its order and the same verdicts; a part whose child fails is checked here."""
    from lab.studies import correctness_child, gpu_share

    monkeypatch.setattr(records, "RUNS_DIR", tmp_path)
    names = ["sdpa_flash", "fake_good", "fake_wrong", "fake_raises"]
    real_run_grid = check.run_grid
    monkeypatch.setattr(check, "run_grid", lambda *a, **kw: real_run_grid(*a, device="cpu", **kw))
    monkeypatch.setattr(check, "peer_grid", lambda: [check.Case(2, 3, 17 + i, 64, c) for i in range(3)
                                                      for c in (False, True)])
    alone = _peer_run(tmp_path / "alone", names)
    one = peer_check.check_peers(alone, progress=lambda s: None)
    shared = _peer_run(tmp_path / "shared", names)
    made = [tmp_path / f"made{k}.json" for k in range(2)]
    for k in range(2):  # the child's work, here (the fakes are this process's), copied out by the stand-in child
        correctness_child.check_part(shared, k, 2, made[k], say=lambda s: None, peers=True)
    from lab.studies import warm

    monkeypatch.delenv(warm.COMPILE_THREADS_ENV, raising=False)
    # the stand-in child fails unless it was given its GPU and its share of inductor's compile threads
    copy = ("import os, shutil, sys; assert os.environ['CUDA_VISIBLE_DEVICES'] in '01'; "
            f"assert os.environ['{warm.COMPILE_THREADS_ENV}'] == '{warm.compile_threads(2)}'; "
            "shutil.copy(sys.argv[1], sys.argv[2])")
    lines = []
    pending = peer_check.start(shared, ["0", "1"], lines.append,
                               command=lambda run_dir, k, n, out: [sys.executable, "-c", copy, str(made[k]), str(out)])
    assert isinstance(pending, gpu_share.SharedCheck)
    got = peer_check.finish(shared, pending, lines.append)
    assert not any("exited" in ln for ln in lines), lines
    assert [(r.variant, r.case, r.passed) for r in got] == [(r.variant, r.case, r.passed) for r in one]
    assert shared.read_json("peers.json") == alone.read_json("peers.json")
    assert shared.read_json("peer_correctness.json") == alone.read_json("peer_correctness.json")
    assert "excluded" in shared.read_json("peers.json")["fake_wrong"]

    failing = _peer_run(tmp_path / "failing", names)
    lines.clear()
    pending = peer_check.start(failing, ["0", "1"], lines.append,
                               command=lambda run_dir, k, n, out: [sys.executable, "-c", "raise SystemExit(3)"])
    got = peer_check.finish(failing, pending, lines.append)
    assert [(r.variant, r.case) for r in got] == [(r.variant, r.case) for r in one]
    assert failing.read_json("peers.json") == alone.read_json("peers.json")
    assert sum("exited with code 3" in ln and "checked here" in ln for ln in lines) == 2


def test_no_peer_to_check_starts_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "RUNS_DIR", tmp_path)
    rec = _peer_run(tmp_path, ["sdpa_flash"])
    assert peer_check.start(rec, ["0"], lambda s: None,
                            command=lambda *a: pytest.fail("no child for SDPA alone")) is None
    assert peer_check.finish(rec, None) == [] and not rec.has("peer_correctness.json")


def test_runs_recorded_before_peers_json_time_their_sdpa_backends(tmp_path):
    rec = records.RunRecord(root=tmp_path)
    rec.write_json("params.json", {"variants": [], "shapes": [], "backends": ["flash", "cudnn"]})
    assert [p.name for p in peer_check.run_peers(rec)] == ["sdpa_flash", "sdpa_cudnn"]


def test_profiling_takes_flex_attention_and_names_the_peers_it_leaves_out():
    from lab.measure import profile

    assert "flex_attention" in profiling.PROFILED_PEERS and "sdpa_flash" in profiling.PROFILED_PEERS
    assert profile._prebuild("flex_attention") is None and profile._prebuild("sdpa_cudnn") is None
    assert "unknown implementation" in profile._prebuild("sdpa_nope")
    assert "flashinfer" not in profiling.PROFILED_PEERS and "not profiled" in profiling.NOT_PROFILED_REASON


def test_flex_attention_block_masks_are_built_once_per_shape():
    flex = peers.FlexAttentionPeer()
    q = torch.randn(1, 1, 200, 64)
    causal = flex.block_mask(q, q, True)
    assert flex.block_mask(q, q, True) is causal and flex.block_mask(q, q, False) is not causal
    dense = causal.to_dense()[0, 0]  # 128-row blocks: below the diagonal visible, above it not
    assert dense[1, 0] and not dense[0, 1]


def test_flex_attention_never_falls_back_to_eager_after_many_shapes():
    import torch._dynamo.config as dynamo_config

    assert peers.FlexAttentionPeer.compiled() is peers.FlexAttentionPeer.compiled()  # compiled once
    assert dynamo_config.recompile_limit >= peers.FLEX_RECOMPILE_LIMIT > len(check.grid())
    assert dynamo_config.fail_on_recompile_limit_hit  # past the limit: an error (unsupported), not eager


@pytest.mark.skipif(sys.platform != "linux", reason="inductor's CPU backend needs a C++ compiler")
def test_flex_attention_matches_the_fp32_reference_on_the_cpu():
    """The real compiled flex_attention (inductor's CPU backend in torch 2.13), causal with a custom
    scale and a ragged S, judged by lab.measure.check's rule: takes ~15 s to compile."""
    attn = check.peer_as_attn(peers.FlexAttentionPeer())
    case = check.Case(2, 3, 17, 64, True, check.CUSTOM_SCALE)
    r = check.check_case("flex_attention", attn, case, check.ReferenceCache(device="cpu"))
    assert r.passed, r.explain()
    assert r.max_abs_err < 1e-2 and not math.isnan(r.max_abs_err)


@pytest.mark.gpu
def test_every_importable_peer_passes_its_grid_on_the_gpu():
    """flex_attention and every importable external peer, by the variants' rule (what the run's
    correctness stage does before timing them)."""
    found, status = peers.resolve([n for n in peers.default_names() if not n.startswith("sdpa_")])
    assert [p.name for p in found][:1] == ["flex_attention"], status
    results = list(check.run_grid({p.name: check.peer_as_attn(p) for p in found}, check.peer_grid()))
    failed = [r.explain() for r in results if not r.passed and not r.unsupported]
    assert not failed, failed
    for p in found:  # a peer that runs no case would be excluded from timing
        assert any(r.passed for r in results if r.variant == p.name), p.name


@pytest.mark.gpu
def test_peers_are_timed_through_cuda_graphs_and_cold_launches():
    """What measure_shape does with each peer: the probe (compiling), then a CUDA-graph timer and
    a cold timer over the bound launches inside the peer's context."""
    from lab.measure import timing

    found, _ = peers.resolve(peers.default_names())
    q, k, v = (torch.randn(1, 8, 512, 64, device="cuda", dtype=torch.float16) for _ in range(3))
    for p in found:
        if p.unsupported_reason(q, k, v, True, None):
            continue
        with p.context():
            hot = timing.HotTimer([p.bind(q, k, v, True, None)]).samples(3)
            cold = timing.ColdTimer([p.bind(q, k, v, True, None)]).samples(3)
        assert all(x > 0 for x in hot + cold), p.name


def test_the_dispatcher_contends_only_where_no_sdpa_backend_was_timed():
    """SDPA's default route runs one of its backends' kernels: beside a backend it is a second draw of the same
    kernels, alone (or beside external peers alone) it is SDPA's one entry."""
    from lab.measure.peers import contenders

    assert contenders(["sdpa_cudnn", "sdpa_default", "flash_attn3"]) == ["sdpa_cudnn", "flash_attn3"]
    assert contenders(["sdpa_math", "sdpa_default"]) == ["sdpa_math"]
    assert contenders(["flex_attention", "sdpa_default"]) == ["flex_attention", "sdpa_default"]
    assert contenders(iter(["sdpa_default"])) == ["sdpa_default"] and contenders([]) == []
