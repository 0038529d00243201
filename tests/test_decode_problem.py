"""The decode problem (issue 50) on the CPU: its shapes, what a call accepts, and the fp32 reference a
decode kernel will be checked against. Expectations come from hand computations and a float64 loop
written out here, never from the reference itself."""

import math

import pytest
import torch

from lab.kernels.decode import MAX_Q_LEN, DecodeShape, check_inputs
from lab.measure.decode_check import bottom_right_mask, reference, valid_kv
from lab.studies.shapes import DECODE_MAX_CACHE_BYTES, MODELS, decode_shapes, streams_from_hbm


def test_a_spec_reads_back_and_names_its_parts():
    s = DecodeShape.parse("16,28,4,128,32768,q4,page64")
    assert (s.B, s.H, s.H_kv, s.D, s.cache_len, s.q_len, s.mixed, s.page_size, s.dtype) == \
        (16, 28, 4, 128, 32768, 4, False, 64, "bf16")
    assert DecodeShape.parse(s.spec) == s and s.group == 7
    assert s.id == "decode-B16-H28-kv4-D128-L32768-q4-page64-bf16"
    assert DecodeShape.parse("1,8,8,64,100,fp16").spec == "1,8,8,64,100,fp16"  # q1, unpaged: no words


@pytest.mark.parametrize("text, needle", [
    ("8,32,8,abc,8192", "D must be an integer, got 'abc'"),
    ("8,32,8,128", "expected B,H,H_kv,D,cache_len"),
    ("8,32,6,128,8192", "H_kv=6 must divide H=32"),
    ("8,32,8,128,8192,q9", "q_len=9 new queries; at most 8"),
    ("8,32,8,128,8192,page48", "page size 48"),
    ("8,32,8,128,3,q4", "cache_len=3 must hold the q_len=4"),
    ("8,32,8,128,16,q4,mixed", "in its shortest sequence"),
    ("8,32,8,128,8192,fast", "unknown word 'fast'"),
    ("8,32,8,128,8192,fp8", "unknown word 'fp8'"),
    ("0,32,8,128,8192", "B must be a positive integer"),
])
def test_a_bad_spec_names_the_field_at_fault(text, needle):
    with pytest.raises(ValueError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        DecodeShape.parse(text)


def test_mixed_lengths_run_evenly_from_the_longest_to_an_eighth():
    lens = DecodeShape(5, 8, 8, 64, 800, mixed=True).cache_lens()
    assert lens == [800, 625, 450, 275, 100]  # steps of (800 - 100) / 4 = 175, by hand
    assert DecodeShape(1, 8, 8, 64, 800, mixed=True).cache_lens() == [800]
    assert DecodeShape(3, 8, 8, 64, 800).cache_lens() == [800, 800, 800]


def test_bytes_and_flops_by_hand():
    s = DecodeShape(2, 4, 2, 64, 100, q_len=2, mixed=True)  # lengths 100 and 12 (100 // 8)
    assert s.cache_lens() == [100, 12]
    # K and V: 2 x (100 + 12) tokens x 2 heads x 64 x 2 bytes; Q and O: 2 x 2 x 2 queries x 4 heads x 64 x 2 bytes
    assert s.bytes_moved() == 2 * 112 * 2 * 64 * 2 + 2 * 2 * 2 * 4 * 64 * 2
    # visible keys: sequence of 100: queries see 99 and 100 keys; of 12: 11 and 12 -> 222 pairs
    assert s.flops() == 4 * 64 * 4 * 222
    paged = DecodeShape(2, 4, 2, 64, 100, page_size=64)  # two pages a sequence: 128 slots allocated
    assert paged.pages_per_sequence == 2 and paged.cache_bytes == 2 * 2 * 128 * 2 * 64 * 2


def test_the_decode_set_holds_the_served_models_within_the_memory_bound():
    shapes = decode_shapes()
    assert all(s.cache_bytes <= DECODE_MAX_CACHE_BYTES for s in shapes)
    assert {(s.H, s.H_kv, s.D) for s in shapes} == {h for h in MODELS if h != (12, 12, 64)}
    assert all(s.dtype == "bf16" for s in shapes)
    # issue 50's target 3: one sequence of 128k tokens, one query, 8 K/V heads
    assert any((s.B, s.cache_len, s.q_len, s.H_kv) == (1, 131072, 1, 8) for s in shapes)
    assert {s.q_len for s in shapes} == {1, 4} and any(s.mixed for s in shapes) and any(s.page_size for s in shapes)
    assert len({s.id for s in shapes}) == len(shapes)
    # the wide group (71 query heads on one K/V head) at a uniform batch between 8 x 8k and 64 x 1k
    assert any(s.group > 32 and 8 < s.B < 64 and not s.mixed for s in shapes)
    falcon = DecodeShape(8, 71, 1, 64, 8192)  # 2 x 8 x 8192 x 64 x 2 bytes = 16 MiB: fits a 50 MiB L2
    assert not streams_from_hbm(falcon, 50 << 20) and streams_from_hbm(DecodeShape(8, 32, 8, 128, 8192), 50 << 20)


def test_a_paged_cache_hands_its_pages_out_shuffled():
    s = DecodeShape(3, 4, 2, 64, 100, page_size=32)
    x = s.random_inputs(device="cpu", generator=torch.Generator().manual_seed(1))
    assert x["k_cache"].shape == (12, 32, 2, 64) and x["block_table"].shape == (3, 4)
    assert sorted(x["block_table"].flatten().tolist()) == list(range(12))
    assert x["block_table"].flatten().tolist() != list(range(12))
    assert x["q"].shape == x["out"].shape == (3, 1, 4, 64) and x["q"].dtype == torch.bfloat16
    check_inputs(**x)  # what random_inputs makes, a call takes


def _naive(q, k_cache, v_cache, lens, table, scale):
    """Decode attention written out: each (sequence, query, head) in float64, keys gathered token by token."""
    B, q_len, H, D = q.shape
    H_kv = k_cache.shape[2]
    out = torch.zeros(B, q_len, H, D, dtype=torch.float64)
    for b in range(B):
        n = int(lens[b])
        for t in range(q_len):
            last = n - q_len + t  # the query's own position: it sees keys 0 .. last
            for h in range(H):
                g = h // (H // H_kv)
                scores, values = [], []
                for j in range(last + 1):
                    if table is None:
                        kj, vj = k_cache[b, j, g], v_cache[b, j, g]
                    else:
                        page, slot = int(table[b, j // k_cache.shape[1]]), j % k_cache.shape[1]
                        kj, vj = k_cache[page, slot, g], v_cache[page, slot, g]
                    scores.append(float((q[b, t, h].double() * kj.double()).sum()) * scale)
                    values.append(vj.double())
                top = max(scores)
                w = [math.exp(x - top) for x in scores]
                out[b, t, h] = sum(wi * vi for wi, vi in zip(w, values)) / sum(w)
    return out


@pytest.mark.parametrize("spec", ["2,4,2,16,37", "3,4,1,16,40,q4,mixed", "2,6,3,16,70,q3,page16", "2,4,4,16,33,q8,fp16"])
def test_the_reference_is_attention_written_out(spec):
    s = DecodeShape.parse(spec)
    x = s.random_inputs(device="cpu", generator=torch.Generator().manual_seed(7))
    got = reference(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"])
    want = _naive(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"], 1 / math.sqrt(s.D))
    assert got.dtype == torch.float32 and got.shape == want.shape
    assert torch.allclose(got.double(), want, atol=1e-5, rtol=1e-5)


def test_each_new_query_sees_its_own_prefix_bottom_right():
    # q = 0 makes every visible key equally likely; V holds each key's position: the output is the mean
    # of the positions a query sees, 0 .. n - q_len + i, so (n - q_len + i) / 2. A top-left mask (query i
    # sees 0 .. i) or none at all gives other values.
    n, q_len = 50, 4
    q = torch.zeros(1, q_len, 2, 8, dtype=torch.float16)
    pos = torch.arange(n, dtype=torch.float16)  # integers to 2048 are exact in fp16
    v = pos[None, :, None, None].expand(1, n, 1, 8).contiguous()
    k = torch.randn(1, n, 1, 8).half()
    got = reference(q, k, v, torch.tensor([n], dtype=torch.int32))
    want = torch.tensor([(n - q_len + i) / 2 for i in range(q_len)])
    assert torch.allclose(got[0, :, 0, 0], want) and torch.allclose(got[0, :, 1, 0], want)
    assert bottom_right_mask(2, 4).tolist() == [[True, True, True, False], [True, True, True, True]]


def test_a_paged_cache_gives_what_the_same_cache_contiguous_gives():
    s = DecodeShape(3, 4, 2, 16, 90, q_len=2, mixed=True, page_size=16)
    x = s.random_inputs(device="cpu", generator=torch.Generator().manual_seed(3))
    lens = x["cache_lens"]
    flat_k = torch.zeros(3, 96, 2, 16, dtype=x["k_cache"].dtype)
    flat_v = torch.zeros_like(flat_k)
    for b, n in enumerate(lens.tolist()):
        flat_k[b, :n], flat_v[b, :n] = valid_kv(x["k_cache"], x["v_cache"], n, b, x["block_table"])
    paged = reference(x["q"], x["k_cache"], x["v_cache"], lens, x["block_table"])
    contiguous = reference(x["q"], flat_k, flat_v, lens)
    assert torch.equal(paged, contiguous)


def _call(**change):
    s = DecodeShape(2, 4, 2, 64, 40, q_len=2, page_size=16)
    x = s.random_inputs(device="cpu", generator=torch.Generator().manual_seed(0))
    x.update(change)
    return x


@pytest.mark.parametrize("change, needle", [
    ({"cache_lens": torch.tensor([40, 49], dtype=torch.int32)}, r"cache_lens\[1\] = 49: must hold .* fit the cache's 48 slots"),
    ({"cache_lens": torch.tensor([40, 1], dtype=torch.int32)}, r"cache_lens\[1\] = 1: must hold the 2 new token"),
    ({"cache_lens": torch.tensor([40, 40], dtype=torch.int64)}, r"cache_lens must be \(2,\) int32"),
    ({"block_table": torch.tensor([[0, 1, 2], [3, 4, 99]], dtype=torch.int32)}, r"block_table\[1\] names page 99, outside the cache's 6 pages"),
    ({"block_table": torch.tensor([[0, 1, 2], [3, 4, 5]], dtype=torch.int64)}, r"block_table must be \(2, pages a sequence\) int32"),
    ({"q": torch.randn(2, 2, 4, 64)}, "must share one element type, float16 or bfloat16"),
    ({"q": torch.randn(2, 2, 3, 64, dtype=torch.bfloat16)}, "2 K/V heads must divide q's 3 heads"),
    ({"q": torch.randn(2, 2, 4, 32, dtype=torch.bfloat16)}, "head dim: q has D = 32, the cache 64"),
    ({"q": torch.randn(2, 9, 4, 64, dtype=torch.bfloat16)}, "q_len = 9 new queries a sequence: 1 to 8"),
    ({"q": torch.randn(2, 4, 64, dtype=torch.bfloat16)}, "q must be \\(B, q_len, H, D\\)"),
    ({"v_cache": torch.randn(6, 16, 2, 32, dtype=torch.bfloat16)}, "must have one shape"),
    ({"out": torch.empty(2, 2, 4, 64)}, "out must be q's shape and type"),
])
def test_bad_decode_input_names_the_constraint(change, needle):
    x = _call(**change)
    with pytest.raises(ValueError, match=needle):
        check_inputs(**x)


def test_an_unpaged_cache_needs_a_row_a_sequence_and_pages_their_size():
    x = DecodeShape(2, 4, 2, 64, 40).random_inputs(device="cpu")
    with pytest.raises(ValueError, match="one row a sequence: 3 rows for B = 2"):
        check_inputs(x["q"], torch.cat([x["k_cache"], x["k_cache"][:1]]), torch.cat([x["v_cache"], x["v_cache"][:1]]),
                     x["cache_lens"])
    bad_pages = torch.randn(4, 20, 2, 64, dtype=torch.bfloat16)  # 20-token pages
    with pytest.raises(ValueError, match="page size 20 tokens"):
        check_inputs(x["q"], bad_pages, bad_pages.clone(), x["cache_lens"], torch.zeros(2, 2, dtype=torch.int32))
    assert MAX_Q_LEN == 8


@pytest.mark.parametrize("spec", ["2,4,2,16,37", "2,4,2,16,37,q4", "3,4,1,16,40,q3,mixed", "2,6,6,16,50,mixed"])
def test_sdpa_as_a_decode_peer_gives_the_reference(spec):
    from lab.measure.decode_peers import DecodeSdpaPeer

    s = DecodeShape.parse(spec)
    x = s.random_inputs(device="cpu", generator=torch.Generator().manual_seed(11))
    want = reference(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"])
    for backend in ("math", "default"):
        peer = DecodeSdpaPeer(backend)
        with peer.context():
            got = peer.bind(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"])()
        assert got.shape == x["q"].shape and got.dtype == x["q"].dtype
        assert (got.float() - want).abs().max().item() < 2e-2, (backend, spec)  # bf16 output, fp32 reference


def test_decode_inputs_are_drawn_from_a_generator_on_their_device_when_seeded():
    s = DecodeShape(2, 4, 2, 16, 40, page_size=16)
    a, b, c = (s.random_inputs(device="cpu", seed=k) for k in (5, 5, 6))
    assert all(torch.equal(a[k], b[k]) for k in ("q", "k_cache", "v_cache", "block_table"))  # a seed repeats
    assert not torch.equal(a["k_cache"], c["k_cache"])
    # what seed= means, written out: a generator on the device the inputs live on, seeded, drawn from in order
    g = torch.Generator(device="cpu").manual_seed(5)
    q = torch.randn(2, 1, 4, 16, generator=g, dtype=torch.float32).to(torch.bfloat16)
    assert torch.equal(a["q"], q)
    # a given generator is still drawn from (the values the CPU tests were written with)
    d = s.random_inputs(device="cpu", generator=torch.Generator().manual_seed(5))
    assert torch.equal(d["k_cache"], a["k_cache"])


def test_a_decode_peer_that_cannot_take_a_case_says_why():
    from lab.measure.decode_peers import DecodeSdpaPeer

    x = DecodeShape.parse("2,4,2,16,40,page16").random_inputs(device="cpu")
    why = DecodeSdpaPeer("math").unsupported_reason(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"])
    assert why.startswith("ValueError: sdpa_math reads contiguous caches only")
    y = DecodeShape.parse("2,4,2,16,40").random_inputs(device="cpu")
    assert DecodeSdpaPeer("math").unsupported_reason(y["q"], y["k_cache"], y["v_cache"], y["cache_lens"]) is None


def _flex_call(peer):
    """flex_attention as a decode call (check_decode_case's signature), its result copied into `out`."""
    def call(q, k_cache, v_cache, cache_lens, block_table, out):
        out.copy_(peer.bind(q, k_cache, v_cache, cache_lens, block_table)())

    return call


def test_flex_attention_as_a_decode_peer_passes_the_decode_check_on_every_contiguous_case():
    """Eager flex_attention (its reference path, on the CPU) through DecodeFlexPeer's views and block mask, judged
    as a decode step is (fp32 reference, poisoned outputs, every element) on the grid's cases of a contiguous
    cache: several queries bottom-right, mixed and odd lengths, grouped and multi-query heads, both head dims."""
    from lab.measure.decode_check import check_decode_case, decode_grid
    from lab.measure.decode_peers import DecodeFlexPeer

    call = _flex_call(DecodeFlexPeer(compiled=False))
    cases = [(i, s) for i, s in enumerate(decode_grid()) if not s.page_size and s.cache_len <= 1000]
    assert {s.q_len for _, s in cases} >= {1, 2, 4, 8} and any(s.mixed for _, s in cases)
    for i, s in cases:
        r = check_decode_case("flex_attention", call, s, i, device="cpu")
        assert r["passed"], (s.spec, r)


def test_flex_attention_sees_each_sequence_only_to_its_length():
    """A mask that let a query see past its sequence's end (or its own bottom-right diagonal) fails the check: the
    test of the peer can fail."""
    import lab.measure.decode_peers as decode_peers
    from lab.measure.decode_check import check_decode_case
    from lab.measure.decode_peers import DecodeFlexPeer

    shape = DecodeShape.parse("4,32,8,128,300,q4,mixed")
    good = check_decode_case("flex_attention", _flex_call(DecodeFlexPeer(compiled=False)), shape, 3, device="cpu")
    assert good["passed"]
    original = decode_peers._bottom_right
    try:
        decode_peers._bottom_right = lambda lens, q_len: (lambda b, h, q_idx, kv_idx: kv_idx < lens[b])  # no diagonal
        wrong = check_decode_case("flex_attention", _flex_call(DecodeFlexPeer(compiled=False)), shape, 3,
                                  device="cpu")
    finally:
        decode_peers._bottom_right = original
    assert not wrong["passed"] and wrong["max_abs_err"] > wrong["tolerance"]


def test_flex_attention_takes_no_paged_cache_and_says_why():
    from lab.measure.decode_peers import DecodeFlexPeer, DecodeSdpaPeer, decode_peer

    x = DecodeShape.parse("2,4,2,16,40,page16").random_inputs(device="cpu")
    why = DecodeFlexPeer(compiled=False).unsupported_reason(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"],
                                                            x["block_table"])
    assert why.startswith("ValueError: flex_attention reads contiguous caches only (no block table)")
    assert decode_peer("flex_attention") == DecodeFlexPeer() and decode_peer("sdpa_cudnn") == DecodeSdpaPeer("cudnn")
    with pytest.raises(ValueError, match="unknown decode peer 'fa3': sdpa_<backend> or flex_attention"):
        decode_peer("fa3")


def test_the_decode_set_times_flex_attention_where_the_run_names_it():
    from lab.studies.decode_study import gpu_peers
    from lab.studies.params import RunParams

    names = lambda p: [x.name for x in gpu_peers(p)]  # noqa: E731
    default = RunParams.from_text(backends="cudnn,flash")
    assert names(default) == names(default.resolved()) == ["sdpa_cudnn", "sdpa_flash", "flex_attention"]
    assert names(RunParams.from_text(peers="sdpa_cudnn").resolved()) == ["sdpa_cudnn"]  # as params.json names them
    assert names(RunParams.from_text(peers="sdpa_cudnn,flex_attention").resolved()) == ["sdpa_cudnn", "flex_attention"]
    import dataclasses

    old = dataclasses.replace(RunParams.from_text(backends="cudnn"), peers=None)  # a run from before peers.json
    assert names(old) == ["sdpa_cudnn"]


def test_the_decode_grid_covers_what_a_kernel_must_get_right():
    from lab.measure.decode_check import decode_grid

    grid = decode_grid()
    assert {s.q_len for s in grid} == {1, 2, 4, 8} and {s.D for s in grid} == {64, 128}
    assert {s.dtype for s in grid} == {"fp16", "bf16"} and {s.page_size for s in grid} == {None, 16, 64}
    assert {s.group for s in grid} >= {1, 2, 4, 8} and any(s.H_kv == 1 for s in grid) and any(s.mixed for s in grid)
    assert any(s.cache_len == s.q_len for s in grid)  # the minimum cache: the new tokens alone
    assert any(s.page_size and s.cache_len % s.page_size == 1 for s in grid)  # one token past a page
    # caches long enough that a kernel splitting the keys across CTAs splits them (step 38's chunks are
    # 256 keys at the least), paged and mixed among them
    assert any(s.cache_len >= 3000 and s.mixed and s.page_size for s in grid)
    assert any(s.cache_len >= 3000 and not s.page_size for s in grid)
    # more packed query rows (new queries x group) than a row-warp CTA holds (step 46: 96), unpaged
    assert any(s.q_len * s.group > 96 and not s.page_size for s in grid)
    # more (sequence, K/V head) pairs than 4 CTAs an SM on 132 SMs: a persistent CTA walks several
    assert any(s.B * s.H_kv > 4 * 132 for s in grid)
    # a wide (more than 32 packed rows), mixed batch of many sequences with thousands of keys: the row
    # blocks' chunks of step 56 differ from the TMA tile's own rule there (the workspace must follow)
    assert any(s.group > 32 and s.mixed and s.B >= 32 and s.cache_len >= 4096 for s in grid)
    assert len({s.id for s in grid}) == len(grid)


def _buggy(kind):
    """A decode call with one deliberate bug, built on SDPA's."""
    from lab.measure.decode_check import sdpa_call

    good = sdpa_call("math")

    def call(q, k_cache, v_cache, cache_lens, block_table, out):
        if kind == "one_key_short":  # the last valid key left out where there is more than the new tokens
            lens = torch.where(cache_lens > q.shape[1], cache_lens - 1, cache_lens)
            return good(q, k_cache, v_cache, lens, block_table, out)
        if kind == "pages_in_order" and block_table is not None:  # the block table ignored
            table = torch.arange(block_table.numel(), dtype=torch.int32).view(block_table.shape)
            return good(q, k_cache, v_cache, cache_lens, table, out)
        if kind == "last_head_unwritten":
            good(q, k_cache, v_cache, cache_lens, block_table, out)
            out[:, :, -1] = float("nan")
            return None
        if kind == "noisy":
            good(q, k_cache, v_cache, cache_lens, block_table, out)
            out.add_(torch.randn_like(out) * 1e-3)
            return None
        return good(q, k_cache, v_cache, cache_lens, block_table, out)

    return call


def _grid_on_a_cpu(most_pairs: int = 1_000_000):
    """The decode grid's cases of at most `most_pairs` query-key pairs (B x H x new queries x cache length), with their
    grid indices: the two wide batches (32, 71, 1, 64, 4096) and (80, 32, 8, 128, 700, q2) took 19 of its 23 s on
    2 CPU cores, and the mutation run repeats these tests for every mutant of the check. What the bugs need stays:
    paged, mixed, several-query and fp16 cases."""
    from lab.measure.decode_check import decode_grid

    kept = [(i, s) for i, s in enumerate(decode_grid()) if s.B * s.H * s.q_len * s.cache_len <= most_pairs]
    shapes = [s for _, s in kept]
    assert len(kept) >= len(decode_grid()) - 2 and any(s.page_size for s in shapes) and any(s.mixed for s in shapes)
    assert any(s.q_len > 1 for s in shapes) and any(s.dtype == "fp16" for s in shapes)
    return kept


@pytest.mark.parametrize("kind, fails_at_least", [("one_key_short", 5), ("pages_in_order", 3),
                                                   ("last_head_unwritten", 10), ("noisy", 10), ("none", 0)])
def test_the_decode_check_catches_each_deliberate_bug(kind, fails_at_least):
    from lab.measure.decode_check import check_decode_case

    results = [check_decode_case(kind, _buggy(kind), s, i, device="cpu") for i, s in _grid_on_a_cpu()]
    failed = sum(not r["passed"] for r in results)
    assert failed >= fails_at_least if fails_at_least else failed == 0, [(r["case"], r["max_abs_err"]) for r in results]


def test_a_call_that_raises_is_a_result():
    from lab.measure.decode_check import check_decode_case, decode_grid

    def broken(*args):
        raise RuntimeError("launch failed")

    r = check_decode_case("broken", broken, decode_grid()[1], 1, device="cpu")
    assert not r["passed"] and r["error"] == "RuntimeError: launch failed"


@pytest.mark.parametrize("spec, scale", [("2,6,3,16,70,q3,page16", 0.3), ("1,32,32,16,40,page16", None)])
def test_the_reference_takes_a_scale_and_more_kv_heads_than_a_page_has_tokens(spec, scale):
    s = DecodeShape.parse(spec)
    x = s.random_inputs(device="cpu", generator=torch.Generator().manual_seed(5))
    got = reference(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"], scale=scale)
    want = _naive(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"],
                  1 / math.sqrt(s.D) if scale is None else scale)
    assert torch.allclose(got.double(), want, atol=1e-5, rtol=1e-5)


def test_a_decode_check_record_holds_every_field_with_its_meaning():
    from lab.measure.check import tolerance
    from lab.measure.decode_check import check_decode_case, decode_grid, sdpa_call

    shape = decode_grid()[1]  # bf16
    r = check_decode_case("sdpa_math", sdpa_call("math"), shape, 1, device="cpu")
    assert set(r) == {"impl", "case", "sdpa_max_abs_err", "tolerance", "max_abs_err", "finite", "inputs_unchanged",
                      "deterministic", "passed", "error"}
    assert (r["impl"], r["case"], r["error"]) == ("sdpa_math", shape.id, "")
    assert 0 < r["sdpa_max_abs_err"] < 0.05 and r["tolerance"] == tolerance(r["sdpa_max_abs_err"], "bf16")
    assert r["passed"] and r["finite"] and r["inputs_unchanged"] and r["deterministic"] and r["max_abs_err"] <= r["tolerance"]
    good, calls = sdpa_call("math"), []

    def first_call_unwritten(q, k_cache, v_cache, cache_lens, block_table, out):  # NaN left in the first output
        calls.append(1)
        if len(calls) > 1:
            good(q, k_cache, v_cache, cache_lens, block_table, out)

    bad = check_decode_case("half", first_call_unwritten, shape, 1, device="cpu")
    assert not bad["finite"] and bad["max_abs_err"] == float("inf") and not bad["passed"] and not bad["deterministic"]
    raised = check_decode_case("raises", lambda *a: 1 / 0, shape, 1, device="cpu")
    assert math.isnan(raised["max_abs_err"]) and raised["error"] == "ZeroDivisionError: division by zero"


def test_a_decode_check_with_lengths_given_checks_those_lengths():
    import torch

    from lab.kernels.decode import DecodeShape
    from lab.measure.decode_check import check_decode_case, sdpa_call

    shape = DecodeShape.parse("3,4,2,64,40,q2")
    lens = [2, 40, 17]  # the shortest a call may have (q_len), the cache's whole, one between
    good, seen = sdpa_call("math"), []

    def recording(q, k_cache, v_cache, cache_lens, block_table, out):
        seen.append((cache_lens.dtype, cache_lens.tolist()))
        good(q, k_cache, v_cache, cache_lens, block_table, out)

    r = check_decode_case("sdpa_math", recording, shape, 3, device="cpu", cache_lens=lens)
    assert r["passed"], r
    assert seen == [(torch.int32, lens)] * 2

    def whole_cache(q, k_cache, v_cache, cache_lens, block_table, out):  # right only where a sequence fills it
        good(q, k_cache, v_cache, torch.full_like(cache_lens, 40), block_table, out)

    assert not check_decode_case("whole", whole_cache, shape, 3, device="cpu", cache_lens=lens)["passed"]
    for bad in ([2, 40], [1, 40, 17], [2, 41, 17]):
        with pytest.raises(ValueError, match="cache_lens: 3 lengths from q_len=2 to cache_len=40"):
            check_decode_case("sdpa_math", good, shape, 3, device="cpu", cache_lens=bad)


def test_the_recorded_error_is_the_first_call_s():
    from lab.measure.decode_check import check_decode_case, decode_grid, sdpa_call

    good, calls = sdpa_call("math"), []

    def noisy_second(q, k_cache, v_cache, cache_lens, block_table, out):
        calls.append(1)
        good(q, k_cache, v_cache, cache_lens, block_table, out)
        if len(calls) == 2:
            out.add_(1.0)

    r = check_decode_case("noisy_second", noisy_second, decode_grid()[1], 1, device="cpu")
    assert r["max_abs_err"] <= r["tolerance"] and r["finite"] and not r["deterministic"] and not r["passed"]


# --- the split rule of the decode steps that split the keys (fa::split_chunks, fa/decode.cuh) ----------

@pytest.fixture(scope="module")
def split_rule(tmp_path_factory):
    """fa::split_chunks compiled alone into a host library (nvcc, no GPU): (pairs, wave, capacity, BC) ->
    (splits, chunk)."""
    import ctypes
    import subprocess

    from lab.kernels import build

    out = tmp_path_factory.mktemp("split_rule")
    src = out / "split_rule.cu"
    src.write_text('#include "fa/decode.cuh"\n'
                   'extern "C" void split_rule(long long pairs, long long wave, int capacity, int bc, int* out) {\n'
                   '  fa::SplitPartials p{};\n  fa::split_chunks(pairs, wave, capacity, bc, p);\n'
                   '  out[0] = p.splits;\n  out[1] = p.chunk;\n}\n'
                   'extern "C" void efficiency_rule(long long pairs, long long wave, int capacity, int bc, int* out) {\n'
                   '  fa::SplitPartials p{};\n  fa::split_chunks_by_efficiency(pairs, wave, capacity, bc, p);\n'
                   '  out[0] = p.splits;\n  out[1] = p.chunk;\n}\n'
                   'extern "C" void one_cta_rule(long long pairs, long long wave, long long sms, int capacity, int bc,\n'
                   '                             int* out) {\n'
                   '  fa::SplitPartials p{};\n  fa::split_chunks_one_cta_an_sm(pairs, wave, sms, capacity, bc, p);\n'
                   '  out[0] = p.splits;\n  out[1] = p.chunk;\n}\n'
                   'extern "C" void wide_rule(long long pairs, long long wave, long long sms, int capacity, int bc,\n'
                   '                          int* out) {\n'
                   '  fa::SplitPartials p{};\n'
                   '  out[2] = fa::wide_group_takes_row_blocks(pairs, wave, sms, capacity, bc, p);\n'
                   '  out[0] = p.splits;\n  out[1] = p.chunk;\n}\n'
                   'extern "C" void wave_rule(long long pairs, long long wave, int capacity, int bc, int* out) {\n'
                   '  fa::SplitPartials p{};\n'
                   '  out[2] = fa::wide_group_fills_one_wave(pairs, wave, capacity, bc, p);\n'
                   '  out[0] = p.splits;\n  out[1] = p.chunk;\n}\n')
    lib = out / "split_rule.so"
    subprocess.run([build.nvcc_path(), "-shared", "-Xcompiler", "-fPIC", "-std=c++17", f"-I{build.INCLUDE_DIR}",
                    "-o", str(lib), str(src)], check=True, capture_output=True)
    library = ctypes.CDLL(str(lib))
    for fn in (library.split_rule, library.efficiency_rule):
        fn.argtypes = [ctypes.c_longlong, ctypes.c_longlong, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]

    def rule(pairs, wave, capacity, bc=64, fn=library.split_rule):
        res = (ctypes.c_int * 2)()
        fn(pairs, wave, capacity, bc, res)
        return res[0], res[1]

    rule.by_efficiency = lambda pairs, wave, capacity, bc=64: rule(pairs, wave, capacity, bc, library.efficiency_rule)
    library.one_cta_rule.argtypes = [ctypes.c_longlong, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_int,
                                     ctypes.c_int, ctypes.POINTER(ctypes.c_int)]

    def one_cta_an_sm(pairs, wave, sms, capacity, bc=64):
        res = (ctypes.c_int * 2)()
        library.one_cta_rule(pairs, wave, sms, capacity, bc, res)
        return res[0], res[1]

    rule.one_cta_an_sm = one_cta_an_sm
    library.wide_rule.argtypes = library.one_cta_rule.argtypes

    def wide_group(pairs, wave, sms, capacity, bc=64):
        res = (ctypes.c_int * 3)()
        library.wide_rule(pairs, wave, sms, capacity, bc, res)
        return bool(res[2]), (res[0], res[1])

    rule.wide_group = wide_group
    library.wave_rule.argtypes = library.split_rule.argtypes

    def fills_one_wave(pairs, wave, capacity, bc=64):
        res = (ctypes.c_int * 3)()
        library.wave_rule(pairs, wave, capacity, bc, res)
        return bool(res[2]), (res[0], res[1])

    rule.fills_one_wave = fills_one_wave
    return rule


@pytest.mark.parametrize("pairs, wave, capacity, expected", [
    # A wave of pairs or more: one chunk, the whole cache.
    (512, 264, 1024, (1, 1024)), (264, 264, 8192, (1, 8192)),
    # Batch 1 of 8 K/V heads, 128k tokens: two waves want 66 chunks of 1,986 keys; rounded up to whole
    # 64-key tiles, 2,048 keys, so 64 chunks cover the cache.
    (8, 264, 131072, (64, 2048)),
    # Batch 8 of 8 heads, 8,192 tokens: ceil(528 / 64) = 9 chunks of 911 keys -> 960 keys, 9 chunks.
    (64, 264, 8192, (9, 960)),
    # Short caches: at least 256 keys a chunk (1,000 tokens allow 3 chunks of 334 -> 384 keys).
    (8, 264, 1000, (3, 384)), (8, 264, 300, (1, 320)), (8, 264, 37, (1, 64)),
])
def test_the_split_rule_fills_two_waves_with_chunks_of_at_least_256_keys(split_rule, pairs, wave, capacity, expected):
    splits, chunk = split_rule(pairs, wave, capacity)
    assert (splits, chunk) == expected
    assert chunk % 64 == 0 and splits * chunk >= capacity > (splits - 1) * chunk  # the chunks cover the cache once


@pytest.mark.parametrize("pairs, wave, capacity, expected", [
    # 0.8 of a wave of pairs or more: one chunk (10 x 212 >= 8 x 264; the loss step 38 measured at 256 pairs)
    (256, 264, 1024, (1, 1024)), (212, 264, 8192, (1, 8192)),
    # Just under: 211 pairs fill 0.80 of a wave with 1 to 4 chunks and 0.999 with 5 (1,055 of 1,056 slots
    # over 4 waves); 5 chunks of 1,639 keys -> 1,664
    (211, 264, 8192, (5, 1664)),
    # Batch 8 of 8 K/V heads, 8,192 tokens: 4 chunks fill 256 of 264 slots (0.970, the best any count up
    # to 32 reaches); fewer reach at most 0.727 -> 4 chunks of 2,048 keys
    (64, 264, 8192, (4, 2048)),
    # Batch 1 of 8 K/V heads, 128k tokens: 33 chunks fill the wave exactly; the fewest within 85 % is 29
    # (232 of 264 slots, 0.879; 28 give 0.848) -> chunks of 4,520 keys -> 4,544, 29 of them
    (8, 264, 131072, (29, 4544)),
    # 1,000 tokens allow 3 chunks of 256 or more, each count far from a wave: the most, 3 (384 keys)
    (8, 264, 1000, (3, 384)),
])
def test_the_efficiency_rule_fills_one_wave_well_and_never_splits_a_full_one(split_rule, pairs, wave, capacity,
                                                                             expected):
    splits, chunk = split_rule.by_efficiency(pairs, wave, capacity)
    assert (splits, chunk) == expected
    assert chunk % 64 == 0 and chunk >= min(256, capacity) and splits * chunk >= capacity > (splits - 1) * chunk


@pytest.mark.parametrize("pairs, capacity, expected", [
    # An H200's 132 SMs, two CTAs an SM: a wave of 264. Where step 42 does not split (212 pairs or more), neither
    # does step 54.
    (212, 8192, (1, 8192)), (512, 1024, (1, 1024)),
    # Batch 8 of 8 K/V heads, 8,192 tokens: 64 pairs; over 132 slots 1 chunk fills 0.485, 2 fill 128 of 132
    # (0.970, the best any count up to 32 reaches) -> 2 chunks of 4,096 keys (step 42: 4 of 2,048)
    (64, 8192, (2, 4096)),
    # Qwen2.5-7B's 4 K/V heads at batch 8: 32 pairs; 3 chunks fill 0.727, 4 fill 0.970 -> 4 of 2,048 keys
    (32, 8192, (4, 2048)),
    # Batch 1 of 8 K/V heads, 128k tokens: 33 chunks fill two waves exactly (1.0); one wave's 14 chunks fill
    # 112 of 132 (0.848, under 0.85), 15 fill 120 (0.909) -> 15 chunks of 8,738 keys -> 8,768 (step 42: 29)
    (8, 131072, (15, 8768)),
    # 128 pairs (a mixed batch of 32 sequences of 4 K/V heads): one chunk would fill 0.970, but the rule splits
    # (128 < 0.8 x 264), so at least 2: 256 CTAs over two waves of 132, 0.970 -> 2 chunks of 2,048 keys
    (128, 4096, (2, 2048)),
    # 1,000 tokens allow 3 chunks of 256 or more: 2 fill 16 of 132, 3 fill 24 (the best) -> 3 of 384 keys
    (8, 1000, (3, 384)),
    # 300 tokens allow one chunk: at least 2 gives way to the most there may be
    (8, 300, (1, 320)),
])
def test_the_one_cta_an_sm_rule_counts_chunks_over_the_sms_where_step_42_splits(split_rule, pairs, capacity, expected):
    splits, chunk = split_rule.one_cta_an_sm(pairs, 264, 132, capacity)
    assert (splits, chunk) == expected
    assert chunk % 64 == 0 and chunk >= min(256, capacity) and splits * chunk >= capacity > (splits - 1) * chunk


@pytest.mark.parametrize("pairs, capacity, expected", [
    # Falcon-7B's 71 rows a K/V head are 5 blocks of 16. An H200: 132 SMs; the 16-row tile at D = 64 (48 KB of
    # K/V stages, 109 registers) runs three CTAs an SM, a wave of 396.
    # Batch 64 of 1,024 tokens: 320 blocks fill 0.8 of the wave (3,200 >= 8 x 396), no split: 1,024 keys a CTA
    # -> row blocks
    (320, 1024, (True, (1, 1024))),
    # ... of 2,048 tokens: the bound itself (at most 2,048 keys a CTA); of 2,049: one chunk of 33 key tiles
    (320, 2048, (True, (1, 2048))), (320, 2049, (False, (1, 2112))),
    # The mixed batch of 32 sequences of up to 4,096 tokens: 160 blocks; over 132 slots 2 chunks fill 320 of 396
    # (0.81), 3 fill 480 of 528 (0.909), within 85 % of the best (13: 2,080 of 2,112, 0.985) -> 3 of 1,366 keys
    # -> 1,408
    (160, 4096, (True, (3, 1408))),
    # Batch 8 of 8,192 tokens: 40 blocks; 2 chunks fill 80 of 132 (0.606), 3 fill 120 (0.909; the best, 13, 0.985)
    # -> 3 chunks of 2,731 keys -> 2,752, past the bound -> the row warps
    (40, 8192, (False, (3, 2752))),
    # The paged batch of 16 with 4 new queries: 284 rows, 18 blocks a sequence, 288 blocks, under 0.8 of the wave:
    # over 132 slots 2 chunks fill 576 of 660 (0.873), within 85 % of the best -> 2 chunks of 16,384 keys
    (288, 32768, (False, (2, 16384))),
])
def test_a_wide_group_takes_row_blocks_where_their_chunks_are_at_most_2048_keys(split_rule, pairs, capacity, expected):
    assert split_rule.wide_group(pairs, 396, 132, capacity) == expected


@pytest.mark.parametrize("pairs, capacity, expected", [
    # Step 56's rule, on an H200's 16-row tile at D = 64: a wave of 396 CTAs (3 an SM x 132). Falcon-7B's 71 rows
    # a K/V head are 5 blocks of 16.
    # Batch 64 of 1,024 tokens: 320 blocks, 396 // 320 = 1 chunk fits -> row blocks, one chunk of the whole cache
    (320, 1024, (True, (1, 1024))),
    # Batch 32: 160 blocks, 2 chunks fit (320 <= 396 < 480) -> 2 of 512 keys (step 55: 3 of 384, 480 CTAs)
    (160, 1024, (True, (2, 512))),
    # Batch 16: 80 blocks, 4 fit, and 1,024 keys allow at most 4 chunks of 256 -> 4 of 256
    (80, 1024, (True, (4, 256))),
    # Batch 4 of 4,096 tokens: 20 blocks, 19 fit, but 256 keys a chunk at the least allow 16 -> 16 of 256
    (20, 4096, (True, (16, 256))),
    # Batch 8 of 8,192: 40 blocks, 9 fit -> ceil(8192 / 9) = 911 keys -> 960 (whole 64-key tiles), 9 chunks
    (40, 8192, (True, (9, 960))),
    # A wave exactly (396 blocks): one chunk; one block more: not even one chunk fits -> the row warps
    (396, 1024, (True, (1, 1024))), (397, 1024, (False, (1, 1024))),
    # Batch 64 with 2 new queries: 142 rows, 9 blocks a sequence, 576 -> the row warps
    (576, 1024, (False, (1, 1024))),
    # The mixed batch of 32 of up to 4,096 tokens: 2 chunks of 2,048 keys, the bound itself -> row blocks; one
    # token more: 2,049 keys -> 2,112, past it -> the row warps
    (160, 4096, (True, (2, 2048))), (160, 4097, (False, (2, 2112))),
    # The paged batch of 16 with 4 new queries: 288 blocks, 1 chunk of 32,768 keys, past the bound -> the row warps
    (288, 32768, (False, (1, 32768))),
])
def test_step_56_row_blocks_take_the_most_chunks_that_fit_one_wave(split_rule, pairs, capacity, expected):
    taken, (splits, chunk) = split_rule.fills_one_wave(pairs, 396, capacity)
    assert (taken, (splits, chunk)) == expected
    assert pairs * splits <= 396 or not taken  # the row blocks never take more CTAs than a wave holds
    assert chunk % 64 == 0 and splits * chunk >= capacity > (splits - 1) * chunk  # the chunks cover the cache once


def test_step_57s_decode_kernels_prefetch_both_tensor_maps_and_step_56s_none():
    """Step 57's one idea, read off the SASS (nvcc, no GPU): each of its 12 decode kernels (the TMA tile at two row
    counts and the row warps, D = 64 and 128, fp16 and bf16) issues the two tensor-map prefetches, step 56's none."""
    from lab.kernels import switches as sw

    for name, prefetches in (("tensor_maps_prefetched", 2), ("row_blocks_fill_one_wave", 0)):
        kernels = {k: t for k, t in sw.sass_by_kernel(sw.sass(name, "sm_90a")).items() if "decode_fwd" in k}
        assert len(kernels) == 12, name
        assert {k: t.count("UTMACCTL.PF") for k, t in kernels.items()} == {k: prefetches for k in kernels}, name
