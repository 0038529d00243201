"""CPU tests of the correctness grid's model inputs (issue 22): bf16 and grouped-query cases, their
reference and tolerance, fake kernels right and wrong, and the peers' enable_gqa wiring. Every
expected number is derived by hand in the test (not by the code under test)."""

import math
from collections import Counter

import pytest
import torch
import torch.nn.functional as F

from lab.measure import check, peers


def _attention_by_head(q, k, v, causal, scale, kv_head_of):
    """Attention computed head by head in fp32, query head h reading K/V head kv_head_of(h, H, H_kv):
    a stand-in kernel written apart from lab.measure.check.reference (a loop, no expansion)."""
    B, H, S, D = q.shape
    H_kv = k.shape[1]
    scale = 1 / math.sqrt(D) if scale is None else scale
    out = torch.empty(q.shape, dtype=torch.float32)
    for h in range(H):
        j = kv_head_of(h, H, H_kv)
        s = (q[:, h].float() @ k[:, j].float().transpose(-1, -2)) * scale
        if causal:
            s = s.masked_fill(torch.ones(S, S, dtype=torch.bool).triu(1), float("-inf"))
        out[:, h] = torch.softmax(s, dim=-1) @ v[:, j].float()
    return out


def _fake(kv_head_of, drop_last_key=False, takes=None):
    """A 'kernel' with the variants' interface; `takes`: its not_taken answer (None: takes everything)."""
    def attn(q, k, v, is_causal=False, scale=None, out=None):
        if drop_last_key:  # the last key is never read (an off-by-one at a tile's end)
            k, v = k[:, :, :-1], v[:, :, :-1]
        res = _attention_by_head(q, k, v, is_causal and not drop_last_key, scale, kv_head_of).to(q.dtype)
        out.copy_(res)
        return out

    if takes is not None:
        attn.not_taken = takes
    return attn


SDPA_MAPPING = lambda h, H, H_kv: h // (H // H_kv)  # noqa: E731 - SDPA's enable_gqa: consecutive query heads share
WRONG_MAPPING = lambda h, H, H_kv: h % H_kv  # noqa: E731 - query heads dealt round-robin: a plausible bug


def test_the_bf16_tolerance_scales_the_slack_by_the_unit_roundoff():
    # fp16: 10 mantissa bits, unit roundoff 2^-11; bf16: 7 bits, 2^-8; the slack 1e-3 grows 2^3 = 8 times
    assert check.tolerance(0.004, "fp16") == pytest.approx(2 * 0.004 + 0.001)
    assert check.tolerance(0.004, "bf16") == pytest.approx(2 * 0.004 + 0.008)
    assert check.UNIT_ROUNDOFF["bf16"] / check.UNIT_ROUNDOFF["fp16"] == 8


def test_the_reference_gives_each_query_head_its_k_v_head_as_sdpa_does():
    # with S = 1 the softmax is 1 and the output is V itself: heads 0, 1 read K/V head 0, heads 2, 3 head 1
    q, k = torch.randn(1, 4, 1, 64), torch.randn(1, 2, 1, 64)
    v = torch.tensor([1.0, 2.0]).view(1, 2, 1, 1).expand(1, 2, 1, 64).contiguous()  # K/V head j holds j + 1
    ref = check.reference(q, k, v, causal=False, scale=None)
    assert [ref[0, h, 0, 0].item() for h in range(4)] == [1.0, 1.0, 2.0, 2.0]


@pytest.mark.parametrize("case", [check.Case(2, 8, 129, 64, False, None, 2, "bf16"),
                                  check.Case(2, 8, 129, 128, True, None, 4, "bf16"),
                                  check.Case(2, 12, 17, 64, True, None, 1, "bf16"),
                                  check.Case(2, 3, 127, 64, True, None, 3, "bf16"),
                                  check.Case(2, 16, 129, 64, False, None, 2, "fp16")])
def test_a_correct_model_input_kernel_passes(case):
    r = check.check_case("right", _fake(SDPA_MAPPING), case, check.ReferenceCache(device="cpu"))
    assert r.passed, r.explain()
    assert (r.H_kv, r.dtype) == (case.H_kv, case.dtype)
    slack = 0.008 if case.dtype == "bf16" else 0.001
    assert r.tolerance == pytest.approx(2 * r.sdpa_max_abs_err + slack)


def test_a_wrong_bf16_kernel_fails():
    case = check.Case(2, 3, 129, 64, False, None, 3, "bf16")
    r = check.check_case("off_by_one", _fake(SDPA_MAPPING, drop_last_key=True), case, check.ReferenceCache(device="cpu"))
    assert not r.passed and r.failed and "max abs err" in r.explain()


@pytest.mark.parametrize("H, H_kv, dtype", [(8, 2, "bf16"), (8, 4, "fp16"), (16, 2, "bf16")])
def test_a_gqa_kernel_reading_the_wrong_k_v_head_fails(H, H_kv, dtype):
    case = check.Case(2, H, 129, 64, True, None, H_kv, dtype)
    r = check.check_case("wrong_head", _fake(WRONG_MAPPING), case, check.ReferenceCache(device="cpu"))
    assert not r.passed and r.failed and r.max_abs_err > r.tolerance


def test_a_kernel_that_does_not_take_a_case_is_recorded_as_not_taken_without_running():
    calls = []

    def not_taken(shape):
        calls.append(shape)
        return "" if shape.plain else f"variant 'tma' takes float16 only (its manifest dtypes); got {shape.torch_dtype_name}"

    refs = check.ReferenceCache(device="cpu")
    fp16_only = _fake(SDPA_MAPPING, takes=not_taken)
    case = check.Case(2, 3, 17, 64, True, None, 3, "bf16")
    r = check.check_case("tma", fp16_only, case, refs)
    assert (r.passed, r.failed) == (False, False)
    assert r.unsupported == "not taken: variant 'tma' takes float16 only (its manifest dtypes); got bfloat16"
    assert r.explain() == "tma B2H3-S17-D64-causal-bf16: not taken: variant 'tma' takes float16 only (its manifest " \
                          "dtypes); got bfloat16"
    assert refs._entries == {}, "no reference is computed for a case nobody takes"
    plain = check.check_case("tma", fp16_only, check.Case(2, 3, 17, 64, True), refs)
    assert plain.passed, plain.explain()


def test_counts_per_dtype_and_head_layout():
    refs = check.ReferenceCache(device="cpu")
    kernels = {"right": _fake(SDPA_MAPPING), "fp16_mha": _fake(SDPA_MAPPING, takes=lambda s: "" if s.plain else "no")}
    cases = [check.Case(2, 3, 17, 64, False), check.Case(2, 8, 17, 64, False, None, 2, "bf16"),
             check.Case(2, 12, 17, 64, True, None, 1, "fp16")]
    results = list(check.run_grid(kernels, cases, device="cpu"))
    assert check.counts(results) == {
        ("fp16", "MHA"): {"cases": 2, "passed": 2, "failed": 0, "not_taken": 0},
        ("bf16", "GQA"): {"cases": 1, "passed": 1, "failed": 0, "not_taken": 1},
        ("fp16", "MQA"): {"cases": 1, "passed": 1, "failed": 0, "not_taken": 1},
    }
    assert check.counts(check.as_records(results)) == check.counts(results)  # correctness.json's records too
    del refs


def test_the_grid_adds_the_model_inputs_and_keeps_the_old_cases():
    model = check.model_cases()
    # fp16: groups 2, 4, 8 and MQA (4 head layouts) x S 17, 129 x D x causal = 32, plus S = 1000 for group 4 and
    # MQA x D x causal = 8; bf16: the same with group 1 (40 + 8), 20 multi-head (5 S x D x causal), 2 scaled
    assert Counter((c.dtype, c.layout) for c in model) == {("fp16", "GQA"): 28, ("fp16", "MQA"): 12,
                                                           ("bf16", "GQA"): 30, ("bf16", "MQA"): 12,
                                                           ("bf16", "MHA"): 28}
    assert {c.H // c.H_kv for c in model} == {1, 2, 4, 8, 12}
    assert {c.D for c in model} == {64, 128} and {c.causal for c in model} == {False, True}
    assert {c.S for c in model if c.H_kv != c.H} == {17, 129, 1000}
    grid = check.grid()
    # 10: the five many-tile grids, causal and not; 2 + 3: the mirrored-round and FA3-sections launches, causal;
    # 2: the non-causal counter launches; 2 + 2: the counter's causal D = 64 tile; 9: the rising-max cases
    assert len(grid) == 116 + 12 + 10 + 2 + 3 + 2 + 2 + 2 + 9 + 110 and grid[-110:] == model
    assert len({c.id for c in grid}) == len(grid)
    # the cases that existed keep their ids, so their seeds and inputs
    assert check.Case(2, 3, 17, 64, True).id == "B2H3-S17-D64-causal"
    assert check.Case(2, 3, 17, 64, True, 0.3).id == "B2H3-S17-D64-causal-scale0.3"
    assert check.Case(2, 8, 129, 64, True, 0.3, 2, "bf16").id == "B2H8-S129-D64-causal-scale0.3-kv2-bf16"


def test_the_grid_crosses_every_tile_rule_of_the_long_sequences():
    """Step 32 takes 192-key tiles at D = 64 from FA_TILE_LONG_S_D64 on (read from the header, not
    from check.py): the grid must have D = 64 cases at and past it, causal and not, in both dtypes,
    whose last tile is partly masked for 128- and 192-key tiles alike."""
    import re

    from lab.kernels import variants
    header = (variants.REPO / "kernels" / "include" / "fa" / "tile_size.cuh").read_text()
    threshold = int(re.search(r"#define FA_TILE_LONG_S_D64 (\d+)", header).group(1))
    bc_long = int(re.search(r"#define FA_TILE_BC_D64_LONG (\d+)", header).group(1))
    long64 = [c for c in check.grid() if c.D == 64 and c.S >= threshold]
    assert {c.causal for c in long64} == {False, True} and {c.dtype for c in long64} == {"fp16", "bf16"}
    assert any(c.S == threshold for c in long64) and any(c.H_kv < c.H for c in long64)
    assert all(c.S % bc_long and c.S % 128 for c in long64 if c.S != threshold) and threshold % bc_long
    from lab.measure import sanitize
    assert {s.causal for s in sanitize.MODEL_SHAPES if s.D == 64 and s.S >= threshold} == {False, True}


def _tile_size_define(name: str) -> int:
    """The value of `#define <name>` in kernels/include/fa/tile_size.cuh: the header's constant, not check.py's."""
    import re

    from lab.kernels import variants
    header = (variants.REPO / "kernels" / "include" / "fa" / "tile_size.cuh").read_text()
    return int(re.search(rf"#define {name} (\d+)", header).group(1))


def _causal_three_wg_rules(c, sms) -> tuple[bool, bool]:
    """Whether a case takes the causal three-warpgroup tile from the static pairs (step 51) and from the counter
    (step 52) on a GPU of `sms` SMs, the rules written out here: S of FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64 or more;
    step 51 where the heavy-light pairs of 192-row tiles, one CTA an SM, fill the last round at least
    FA_TILE_THREE_WGS_CAUSAL_FILL_D64 percent; step 52 where they do not and the launch has
    FA_TILE_THREE_WGS_QUEUE_TILES_PER_SM_D64 192-row tiles an SM."""
    if not (c.causal and c.D == 64 and c.S >= _tile_size_define("FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64")):
        return False, False
    tiles = -(-c.S // 192) * c.B * c.H
    pairs = -(-(-(-c.S // 192)) // 2) * c.B * c.H  # ceil(ceil(S / 192) / 2) pairs a head
    ctas = min(pairs, sms)
    fills = pairs / ctas / -(-pairs // ctas) * 100 >= _tile_size_define("FA_TILE_THREE_WGS_CAUSAL_FILL_D64")
    return fills, not fills and tiles >= _tile_size_define("FA_TILE_THREE_WGS_QUEUE_TILES_PER_SM_D64") * sms


def test_the_grid_and_the_sanitizer_reach_the_three_cta_tile():
    """Step 33 takes three CTAs per SM at D = 64 when S < FA_TILE_THREE_S_MAX_D64 and the grid has
    FA_TILE_THREE_TILES_PER_SM_D64 64-row work tiles an SM (both read from the header, not from
    check.py). The grid must hold such cases for a GPU of up to 160 SMs, causal and not, in both
    dtypes, grouped and MQA, with ragged S (not a multiple of the 128-key tile), one of them past the
    192-key tile's threshold; the sanitizer, one for fp16 multi-head variants and one for bf16."""
    from lab.measure import sanitize
    s_max = _tile_size_define("FA_TILE_THREE_S_MAX_D64")
    per_sm = _tile_size_define("FA_TILE_THREE_TILES_PER_SM_D64")
    long_s = _tile_size_define("FA_TILE_LONG_S_D64")

    def three(B, H, S, D, sms):
        return D == 64 and S < s_max and B * H * -(-S // 64) >= per_sm * sms

    grid = check.grid()
    big = [c for c in grid if three(c.B, c.H, c.S, c.D, 160)]
    assert {c.causal for c in big} == {False, True} and {c.dtype for c in big} == {"fp16", "bf16"}
    assert {c.layout for c in big} == {"MHA", "GQA", "MQA"} and {c.causal for c in big if c.S % 128} == {False, True}
    assert any(long_s < c.S for c in big) and set(check.many_tile_cases()) <= set(big)
    assert any(three(s[0], s[1], s[2], s[3], 160) for s in sanitize.SHAPES)
    assert any(three(s.B, s.H, s.S, s.D, 160) and s.dtype == "bf16" for s in sanitize.MODEL_SHAPES)


def test_the_grid_and_the_sanitizer_reach_the_causal_three_warpgroup_tile():
    """Step 51 gives a causal D = 64 call the three-warpgroup tile from FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64 keys where
    its heavy-light pairs of 192-row tiles, one CTA an SM, fill the launch's last round at least
    FA_TILE_THREE_WGS_CAUSAL_FILL_D64 percent (both read from the header, the rule written out here). On GPUs of
    114 to 160 SMs the grid must reach it in both dtypes, grouped and multi-head, at a ragged S, and hold a causal
    D = 64 case past MIN_S that it leaves; the sanitizer one bf16 shape that takes it."""
    from lab.measure import sanitize
    min_s = _tile_size_define("FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64")

    def taken(c, sms):
        return _causal_three_wg_rules(c, sms)[0]

    grid = check.grid()
    for sms in (114, 132, 160):
        hit = [c for c in grid if taken(c, sms)]
        assert {c.dtype for c in hit} == {"fp16", "bf16"} and {c.H_kv < c.H for c in hit} == {False, True}
        assert any(c.S % 192 for c in hit)
        assert any(c.causal and c.D == 64 and c.S >= min_s and not taken(c, sms) for c in grid)
        assert any(taken(s, sms) and s.dtype == "bf16" for s in sanitize.MODEL_SHAPES)


def test_the_grid_and_the_sanitizer_reach_the_causal_three_warpgroup_tile_from_the_counter():
    """Step 52 gives the causal D = 64 calls of S >= FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64 that step 51 leaves (pairs
    filling the last round under FA_TILE_THREE_WGS_CAUSAL_FILL_D64 percent) the three-warpgroup tile from the
    counter where they have FA_TILE_THREE_WGS_QUEUE_TILES_PER_SM_D64 192-row tiles an SM (the constants read from
    the header, the rule written out here). On GPUs of 114 to 160 SMs the grid must reach it in both dtypes,
    multi-head and grouped, at a ragged S, and the sanitizer one bf16 grouped shape."""
    from lab.measure import sanitize

    def taken(c, sms):
        return _causal_three_wg_rules(c, sms)[1]

    grid = check.grid()
    for sms in (114, 132, 160):
        hit = [c for c in grid if taken(c, sms)]
        assert {c.dtype for c in hit} == {"fp16", "bf16"} and {c.H_kv < c.H for c in hit} == {False, True}
        assert all(c.S % 192 for c in hit)
        assert any(taken(s, sms) and s.dtype == "bf16" and s.H_kv < s.H for s in sanitize.MODEL_SHAPES)


def test_the_grid_and_the_sanitizer_reach_the_mirrored_second_round():
    """Step 64 gives a causal D = 64 call of S >= FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64 the counter's tile from
    FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64 192-row tiles an SM (inclusive) and mirrors its second round under
    FA_TILE_MIRRORED_UNDER_TILES_PER_CTA_D64 tiles a CTA (the constants read from the header, the rule written out
    here, the CTAs one an SM). On GPUs of 114 and 132 SMs (H100 PCIe, H100 SXM and H200) the grid must reach the
    mirrored launches in fp16 and bf16, at a ragged S, and the sanitizer one bf16 shape."""
    from lab.measure import sanitize
    min_s = _tile_size_define("FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64")
    lo = _tile_size_define("FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64")
    under = _tile_size_define("FA_TILE_MIRRORED_UNDER_TILES_PER_CTA_D64")

    def mirrored(c, sms):
        tiles = -(-c.S // 192) * c.B * c.H
        return c.causal and c.D == 64 and c.S >= min_s and lo * sms <= tiles < under * sms

    for sms in (114, 132):
        hit = [c for c in check.grid() if mirrored(c, sms)]
        assert {c.dtype for c in hit} == {"fp16", "bf16"} and all(c.S % 192 for c in hit)
        assert any(mirrored(s, sms) and s.dtype == "bf16" for s in sanitize.MODEL_SHAPES)


def test_the_grid_and_the_sanitizer_reach_the_counter_in_fa3_sections():
    """Step 65 gives a causal D = 128 call of FA_QUEUE_FA3_SECTIONS_MIN_S keys or more sections of
    FA_QUEUE_FA3_SECTION_MB MB of K/V and the counter where the last section holds FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA
    128-row tiles a CTA (the constants read from fa/tile_queue.cuh, the rule written out here, a CTA an SM). On GPUs
    of 114 and 132 SMs the grid must reach that counter in fp16 and bf16, multi-head and grouped, at a ragged S, and
    the sanitizer one bf16 grouped shape."""
    import re

    from lab.kernels import variants
    from lab.measure import sanitize
    from tests.queue_sections import takes_counter
    header = (variants.REPO / "kernels" / "include" / "fa" / "tile_queue.cuh").read_text()
    const = {n: int(re.search(rf"#define {n} (\d+)", header).group(1))
             for n in ("FA_QUEUE_FA3_SECTIONS_MIN_S", "FA_QUEUE_FA3_SECTION_MB", "FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA")}

    def counter(c, sms):
        if not (c.causal and c.D == 128 and c.S >= const["FA_QUEUE_FA3_SECTIONS_MIN_S"]):
            return False
        return takes_counter(c.B, c.H, c.H_kv, c.S, c.D, const["FA_QUEUE_FA3_SECTION_MB"] << 20,
                             const["FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA"], sms)

    for sms in (114, 132):
        hit = [c for c in check.grid() if counter(c, sms)]
        assert {c.dtype for c in hit} == {"fp16", "bf16"} and {c.H_kv < c.H for c in hit} == {False, True}
        assert all(c.S % 128 for c in hit)
        assert any(counter(s, sms) and s.dtype == "bf16" and s.H_kv < s.H for s in sanitize.MODEL_SHAPES)


def test_the_grid_and_the_sanitizer_reach_both_sides_of_step_71s_rule():
    """Step 71 keeps the older queue (two fifths of the L2, the counter from four tiles a CTA) for a causal D = 128 call
    of FA_QUEUE_FA3_SECTIONS_MIN_S to FA_QUEUE_OLDER_UNDER_S keys where that queue takes the counter or walks at most
    FA_QUEUE_OLDER_UNDER_PAIRS static pairs a CTA, and leaves FA3's sections elsewhere (the constants read from
    fa/tile_queue.cuh, the rule written out here, a CTA an SM, an H100's 50 MB of L2). On GPUs of 114 and 132 SMs the
    grid must reach the older queue's counter, its static pairs and the FA3 sections' counter the rule leaves; the
    sanitizer the older queue's counter."""
    import re

    from lab.kernels import variants
    from lab.measure import sanitize
    from tests.queue_sections import takes_counter
    header = (variants.REPO / "kernels" / "include" / "fa" / "tile_queue.cuh").read_text()
    const = {n: int(re.search(rf"#define {n} (\d+)", header).group(1))
             for n in ("FA_QUEUE_FA3_SECTIONS_MIN_S", "FA_QUEUE_FA3_SECTION_MB", "FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA",
                       "FA_QUEUE_OLDER_UNDER_S", "FA_QUEUE_OLDER_UNDER_PAIRS")}
    older_budget = (50 << 20) * 2 // 5

    def side(c, sms):  # None: outside step 71's rule
        if not (c.causal and c.D == 128 and
                const["FA_QUEUE_FA3_SECTIONS_MIN_S"] <= c.S < const["FA_QUEUE_OLDER_UNDER_S"]):
            return None
        tiles = math.ceil(c.S / 128) * c.B * c.H
        if takes_counter(c.B, c.H, c.H_kv, c.S, 128, older_budget, 4, sms):
            return "older counter"
        if math.ceil(tiles / 2) <= const["FA_QUEUE_OLDER_UNDER_PAIRS"] * min(tiles, sms):
            return "older pairs"
        fa3 = takes_counter(c.B, c.H, c.H_kv, c.S, 128, const["FA_QUEUE_FA3_SECTION_MB"] << 20,
                            const["FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA"], sms)
        return "fa3 counter" if fa3 else "fa3 pairs"

    for sms in (114, 132):
        reached = {side(c, sms) for c in check.grid()}
        assert {"older counter", "older pairs", "fa3 counter"} <= reached, (sms, reached)
    assert any(side(s, 132) == "older counter" for s in sanitize.MODEL_SHAPES)


def test_the_grid_and_the_sanitizer_reach_the_counters_causal_d64_tile_in_sections():
    """Step 68 gives the counter's causal D = 64 tile (from FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64 192-row tiles an SM,
    S >= FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64) sections of FA_QUEUE_FA3_SECTION_MB MB of K/V (the constants read from the
    headers, the sections worked out here). On GPUs of 114 and 132 SMs the grid must reach a launch of two sections or
    more that takes the counter, in fp16 and bf16, multi-head and grouped, at a ragged S, and the sanitizer one bf16
    grouped shape."""
    import re

    from lab.kernels import variants
    from lab.measure import sanitize
    from tests.queue_sections import section_heads, takes_counter
    header = (variants.REPO / "kernels" / "include" / "fa" / "tile_queue.cuh").read_text()
    budget = int(re.search(r"#define FA_QUEUE_FA3_SECTION_MB (\d+)", header).group(1)) << 20
    min_s = _tile_size_define("FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64")
    lo = _tile_size_define("FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64")

    def sectioned(c, sms):
        if not (c.causal and c.D == 64 and c.S >= min_s and -(-c.S // 192) * c.B * c.H >= lo * sms):
            return False
        return (section_heads(c.B, c.H, c.H_kv, c.S, 64, budget) < c.B * c.H
                and takes_counter(c.B, c.H, c.H_kv, c.S, 64, budget, lo, sms, BR=192))

    for sms in (114, 132):
        hit = [c for c in check.grid() if sectioned(c, sms)]
        assert {c.dtype for c in hit} == {"fp16", "bf16"} and {c.H_kv < c.H for c in hit} == {False, True}
        assert all(c.S % 192 for c in hit)
        assert any(sectioned(s, sms) and s.dtype == "bf16" and s.H_kv < s.H for s in sanitize.MODEL_SHAPES)


def test_the_grid_and_the_sanitizer_reach_the_counters_tile_from_2048_keys():
    """Step 69 gives causal D = 64 calls of FA_TILE_OVERLAPPED_CAUSAL_MIN_S_D64 keys or more the counter's tile from
    FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64 192-row tiles an SM, its second round mirrored under
    FA_TILE_MIRRORED_UNDER_TILES_PER_CTA_D64 tiles a CTA (the constants read from the header, the rule written out
    here). Under FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64 keys, on GPUs of 114 and 132 SMs, the grid must reach it mirrored
    and not, in fp16 and bf16, grouped, at a ragged S; the sanitizer one bf16 grouped shape."""
    from lab.measure import sanitize
    lo_s, hi_s = _tile_size_define("FA_TILE_OVERLAPPED_CAUSAL_MIN_S_D64"), _tile_size_define(
        "FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64")
    lo, under = _tile_size_define("FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64"), _tile_size_define(
        "FA_TILE_MIRRORED_UNDER_TILES_PER_CTA_D64")

    def kind(c, sms):  # None: a tile of before step 69
        tiles = -(-c.S // 192) * c.B * c.H
        if not (c.causal and c.D == 64 and lo_s <= c.S < hi_s and tiles >= lo * sms):
            return None
        return "mirrored" if tiles < under * sms else "counter"

    for sms in (114, 132):
        hit = [(c, kind(c, sms)) for c in check.grid() if kind(c, sms)]
        assert {k for _, k in hit} == {"mirrored", "counter"}
        assert {c.dtype for c, _ in hit} == {"fp16", "bf16"} and any(c.H_kv < c.H for c, _ in hit)
        assert all(c.S % 192 for c, _ in hit)
        assert any(kind(s, sms) == "counter" and s.dtype == "bf16" and s.H_kv < s.H for s in sanitize.MODEL_SHAPES)


def test_the_grid_and_the_sanitizer_reach_the_counter_of_the_non_causal_d128_kernels():
    """Step 66 gives non-causal D = 128 calls kernels of their own, one for the static list and one for the counter.
    The counter is taken where the last section (K/V heads in two fifths of the L2) holds kQueueTilesPerCta 128-row
    tiles a CTA (the constant read from fa/tile_queue.cuh, the rule written out here, a CTA an SM). On an H100 of 114
    or 132 SMs (50 MB of L2) and an H200 (132, 60 MB) the grid must reach that kernel in fp16 and bf16, and the
    sanitizer with one bf16 grouped shape; the static list's is reached by any small non-causal D = 128 case."""
    import re

    from lab.kernels import variants
    from lab.measure import sanitize
    from tests.queue_sections import takes_counter
    header = (variants.REPO / "kernels" / "include" / "fa" / "tile_queue.cuh").read_text()
    per_cta = int(re.search(r"constexpr int kQueueTilesPerCta = (\d+);", header).group(1))

    def counter(c, sms, l2):
        return not c.causal and c.D == 128 and takes_counter(c.B, c.H, c.H_kv, c.S, c.D, l2 * 2 // 5, per_cta, sms)

    for sms, l2 in ((114, 50 << 20), (132, 50 << 20), (132, 60 << 20)):
        hit = [c for c in check.grid() if counter(c, sms, l2)]
        assert {c.dtype for c in hit} == {"fp16", "bf16"}, (sms, l2)
        assert any(counter(s, sms, l2) and s.dtype == "bf16" and s.H_kv < s.H for s in sanitize.MODEL_SHAPES)
    small = [s for s in sanitize.MODEL_SHAPES if not s.causal and s.D == 128]
    assert any(not counter(s, 132, 60 << 20) for s in small)


def test_inputs_of_a_case_have_k_v_heads_and_the_dtype():
    q, k, v = check.make_inputs(check.Case(2, 8, 17, 64, True, None, 2, "bf16"), device="cpu")
    assert (q.shape, k.shape, v.shape) == ((2, 8, 17, 64), (2, 2, 17, 64), (2, 2, 17, 64))
    assert q.dtype == k.dtype == v.dtype == torch.bfloat16
    # an fp16 multi-head case draws what it drew before: three fp32 normals from its seed, rounded to fp16
    case = check.Case(2, 3, 17, 64, True)
    gen = torch.Generator().manual_seed(case.seed)
    before = [torch.randn((2, 3, 17, 64), generator=gen, dtype=torch.float32).half() for _ in range(3)]
    assert all(torch.equal(a, b) for a, b in zip(check.make_inputs(case, device="cpu"), before))


# --- the peers: enable_gqa and bf16 --------------------------------------------------------------

def test_sdpa_peer_calls_enable_gqa_only_for_grouped_heads(monkeypatch):
    seen = []
    real = F.scaled_dot_product_attention
    monkeypatch.setattr(F, "scaled_dot_product_attention", lambda *a, **kw: seen.append(kw) or real(*a, **kw))
    peer = peers.SdpaPeer("math")
    q, k, v = check.make_inputs(check.Case(1, 8, 17, 64, True, None, 2, "bf16"), device="cpu")
    with peer.context():
        out = peer.bind(q, k, v, True, None)()
    assert seen[-1].get("enable_gqa") is True and out.shape == q.shape and out.dtype == torch.bfloat16
    q, k, v = check.make_inputs(check.Case(1, 4, 17, 64, True), device="cpu")
    with peer.context():
        peer.bind(q, k, v, True, None)()
    assert "enable_gqa" not in seen[-1]


@pytest.mark.parametrize("case", check.PEER_MODEL_CASES)
def test_sdpa_peers_pass_the_model_cases_by_the_variants_rule(case):
    r = check.check_case("sdpa_math", check.peer_as_attn(peers.SdpaPeer("math")), case,
                         check.ReferenceCache(device="cpu"))
    assert r.passed, r.explain()


def test_the_peer_grid_has_bf16_gqa_and_mqa_cases_at_both_head_dims():
    model = [c for c in check.peer_grid() if not c.shape.plain]
    assert model == check.PEER_MODEL_CASES
    assert {c.D for c in model} == {64, 128} and {c.layout for c in model} == {"GQA", "MQA"}
    assert {c.dtype for c in model} == {"bf16"} and any(c.B == 1 for c in model)


def test_the_rising_cases_move_a_lazy_max_after_the_first_tile():
    """The lazy rescale (steps 24 and 61) moves a row's running max only where a key tile raises it by more than 2^8
    (8 in the exponent's base 2, the scale folded in). The grid must hold cases whose rows do that after their first
    128-key tile, in both head dims, causal and not, fp16 and bf16, grouped K/V heads, and one causal D = 64 case that
    takes the counter's three-warpgroup tile (the rule written out in _causal_three_wg_rules). Derived from the case's
    own inputs (make_inputs on the CPU, one head), not from check.py's constants: for the rows that see keys past the
    rise, the max over those keys exceeds the max over the keys before it by more than 8, in scaled base-2 units."""
    import math

    import torch

    rising = [c for c in check.grid() if c.rise_at is not None]
    assert {c.D for c in rising} == {64, 128} and {c.causal for c in rising} == {False, True}
    assert {c.dtype for c in rising} == {"fp16", "bf16"} and {c.layout for c in rising} >= {"MHA", "GQA"}
    assert any(_causal_three_wg_rules(c, sms)[1] for c in rising for sms in (114, 132))
    for c in rising:
        assert 128 <= c.rise_at < c.S
        q, k, _ = check.make_inputs(c, "cpu")
        group = c.H // c.H_kv
        qh, kh = q[0, 0].float(), k[0, 0 // group].float()
        rows = torch.arange(c.rise_at, c.S, max(1, (c.S - c.rise_at) // 64))  # rows that see keys past the rise
        scale = (1.0 / math.sqrt(c.D)) * math.log2(math.e)
        scores = (qh[rows] @ kh.T) * scale
        if c.causal:
            scores = scores.masked_fill(torch.arange(c.S)[None, :] > rows[:, None], float("-inf"))
        before = scores[:, :c.rise_at].max(dim=1).values
        after = scores[:, c.rise_at:].max(dim=1).values
        jumped = (after - before > 8).float().mean().item()
        assert jumped >= 0.9, (c.id, jumped)
    # and the plain cases' inputs do not jump (so the rising ones are what reaches the path)
    plain = check.Case(2, 4, 2048, 128, False)
    q, k, _ = check.make_inputs(plain, "cpu")
    s = (q[0, 0].float()[1000:1064] @ k[0, 0].float().T) / math.sqrt(128) * math.log2(math.e)
    assert ((s[:, 1000:].max(dim=1).values - s[:, :1000].max(dim=1).values) > 8).sum().item() == 0
