"""GPU tests of the decode branch (issue 50): every decode step against the fp32 reference on the decode
grid (lab.measure.decode_check: NaN-poisoned outputs, every element, two calls bit-identical, inputs
unchanged), its launch on the caller's stream and in a CUDA graph, and its bad inputs."""

import pytest

from lab.kernels import variants
from lab.kernels.decode import DecodeShape
from lab.measure.decode_check import check_decode_case, decode_grid

pytestmark = pytest.mark.gpu

DECODE_STEPS = variants.names(problem="decode")
GRID = decode_grid()


class _LoadedOnFirstUse(dict):
    def __missing__(self, name):
        self[name] = fn = variants.load(name)
        return fn


@pytest.fixture(scope="session")
def decode_kernels():
    # each step built and loaded when a test first asks for it, so that `-k step` builds that step alone (building
    # every decode step outlasted a one-step check's 90 s on an H200: data/explorations/2026-12-02-last-chunk-merges)
    return _LoadedOnFirstUse()


def _call(fn):
    return lambda q, k, v, lens, table, out: fn(q, k, v, lens, table, out=out)


@pytest.mark.parametrize("name", DECODE_STEPS)
@pytest.mark.parametrize("index", range(len(GRID)), ids=[s.id for s in GRID])
def test_decode_step_matches_the_fp32_reference(name, index, decode_kernels):
    result = check_decode_case(name, _call(decode_kernels[name]), GRID[index], index)
    assert result["passed"], result


# Lengths 64 m + 1: whatever chunk of whole 64-key tiles (256 keys or more, below 3,000) a split step picks,
# some sequence's last chunk holds one key, which the first of several new queries does not see (its
# bottom-right limit is below it): that chunk's result for the row is empty and must weigh nothing.
CHUNK_EDGE_LENS = [64 * m + 1 for m in range(4, 47)]


@pytest.mark.parametrize("name", DECODE_STEPS)
@pytest.mark.parametrize("spec", ["43,8,2,128,3000,q4", "43,8,2,128,3000,q8,page16"])
def test_a_chunk_whose_keys_the_first_queries_do_not_see(name, spec, decode_kernels):
    result = check_decode_case(name, _call(decode_kernels[name]), DecodeShape.parse(spec), 99,
                               cache_lens=CHUNK_EDGE_LENS)
    assert result["passed"], result


# More works (row block, chunk, K/V head, sequence) than a wave of CTAs holds on an H100's or H200's 132 SMs, at
# 1 to 3 CTAs an SM, besides the grid's case of 16 rows at D = 128: a persistent step's CTA walks two to five of
# them, its ring running on from one to the next (step 72). 32 packed rows with pages at D = 128 (a tile step 72
# leaves on step 70's grid: its fallback), D = 64, Falcon-7B's row blocks.
WAVE_SPECS = ["72,64,8,128,500,q4,mixed,page16", "140,32,8,64,300,fp16", "96,71,1,64,600,mixed"]


@pytest.mark.parametrize("name", DECODE_STEPS)
@pytest.mark.parametrize("spec", WAVE_SPECS)
def test_more_works_than_a_wave_of_ctas(name, spec, decode_kernels):
    result = check_decode_case(name, _call(decode_kernels[name]), DecodeShape.parse(spec), 98)
    assert result["passed"], result


@pytest.mark.parametrize("name", DECODE_STEPS)
def test_a_decode_launch_runs_on_the_callers_stream_and_in_a_graph(name, decode_kernels):
    import torch

    fn = decode_kernels[name]
    x = DecodeShape.parse("2,32,8,128,6000,q2,mixed,page64").random_inputs(generator=torch.Generator().manual_seed(5))
    args = (x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"])
    eager = fn(*args)
    workspace = torch.empty(max(fn.workspace_bytes(x["q"], x["k_cache"], x["block_table"]), 1), dtype=torch.uint8,
                            device="cuda")
    side = torch.cuda.Stream()
    out = torch.full_like(x["q"], float("nan"))
    graph = torch.cuda.CUDAGraph()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn.launch(*args, out, workspace=workspace)  # warm-up on the side stream, then the capture
        out.fill_(float("nan"))
        with torch.cuda.graph(graph, stream=side):
            fn.launch(*args, out, workspace=workspace)
    torch.cuda.current_stream().wait_stream(side)
    assert torch.isnan(out).all()  # the capture ran nothing
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, eager)


def test_the_split_steps_ask_for_a_workspace_where_they_split():
    import torch

    short = DecodeShape.parse("64,32,8,128,1024").random_inputs()
    long = DecodeShape.parse("1,32,8,128,131072").random_inputs()
    for name in DECODE_STEPS:
        fn = variants.load(name)
        split = name != "decode_group_cta"
        assert (fn.workspace_bytes(long["q"], long["k_cache"]) > 0) == split, name
        assert fn.workspace_bytes(short["q"], short["k_cache"]) == 0, name  # 512 pairs fill a wave: one chunk
        if split:  # a workspace too small is refused by the library, never written past
            with pytest.raises(RuntimeError, match="decode launch failed"):
                fn.launch(long["q"], long["k_cache"], long["v_cache"], long["cache_lens"], None, long["out"],
                          workspace=torch.empty(16, dtype=torch.uint8, device="cuda"))


@pytest.mark.parametrize("change, needle", [
    ("lens_past_cache", "must hold the 1 new token"),
    ("page_out_of_range", "outside the cache's"),
    ("mixed_dtypes", "must share one element type"),
    ("cpu_lengths", "must be CUDA tensors"),
    ("head_dim_96", "head dim"),
    ("bad_scale", "scale must be a finite positive number"),
])
def test_bad_decode_input_is_a_value_error_naming_the_constraint(change, needle):
    import torch

    fn = variants.load(DECODE_STEPS[-1])
    x = DecodeShape.parse("2,8,2,64,100,page16").random_inputs()
    args = dict(q=x["q"], k_cache=x["k_cache"], v_cache=x["v_cache"], cache_lens=x["cache_lens"],
                block_table=x["block_table"])
    kwargs = {}
    if change == "lens_past_cache":
        args["cache_lens"] = torch.tensor([100, 10_000], dtype=torch.int32, device="cuda")
    elif change == "page_out_of_range":
        args["block_table"] = x["block_table"].clone().fill_(10_000)
    elif change == "mixed_dtypes":
        args["v_cache"] = x["v_cache"].half()
    elif change == "cpu_lengths":
        args["cache_lens"] = x["cache_lens"].cpu()
    elif change == "head_dim_96":
        y = DecodeShape.parse("2,8,2,96,100,page16").random_inputs()
        args.update(q=y["q"], k_cache=y["k_cache"], v_cache=y["v_cache"])
    elif change == "bad_scale":
        kwargs["scale"] = float("nan")
    with pytest.raises(ValueError, match=needle):
        fn(**args, **kwargs)


def test_nsight_compute_profiles_the_decode_end_and_a_peer_in_one_process(tmp_path):
    """lab.measure.decode_profile on the GPU (the decode study's profile part): one ncu process, each call's
    kernels cut at the separator, every record with a duration and a DRAM throughput in (0, 100]."""
    from lab.measure.decode_profile import profile_decode
    from lab.measure.ncu_process import find_ncu

    if find_ncu() is None:
        pytest.skip("no ncu (Nsight Compute) here")
    end = DECODE_STEPS[-1]
    got = profile_decode([end, "sdpa_cudnn"], "2,32,8,128,4096,bf16", tmp_path)
    assert [r["impl"] for r in got] == [end, "sdpa_cudnn"]
    assert all(r["ok"] for r in got), [r["reason"] for r in got]
    assert got[0]["csv_path"] == got[1]["csv_path"]  # the batch mapped: one process
    for r in got:
        assert r["n_kernels"] >= 1 and r["duration_us"] > 0 and 0 < r["dram_throughput_pct"] <= 100


def test_nsight_compute_profiles_two_decode_shapes_in_one_process(tmp_path):
    """The decode study's profile: both shapes in one ncu process (profile_decode_shapes), each record at its shape."""
    from lab.measure.decode_profile import profile_decode_shapes
    from lab.measure.ncu_process import find_ncu

    if find_ncu() is None:
        pytest.skip("no ncu (Nsight Compute) here")
    end = DECODE_STEPS[-1]
    calls = [("2,32,8,128,4096,bf16", [end, "sdpa_cudnn"]), ("1,32,8,128,32768,bf16", [end])]
    got = profile_decode_shapes(calls, tmp_path)
    first, second = calls[0][0], calls[1][0]
    assert [(r["impl"], r["shape"]) for r in got] == [(end, first), ("sdpa_cudnn", first), (end, second)]
    assert all(r["ok"] for r in got), [r["reason"] for r in got]
    assert len({r["csv_path"] for r in got}) == 1  # the capture mapped: one process
    for r in got:
        assert r["n_kernels"] >= 1 and r["duration_us"] > 0 and 0 < r["dram_throughput_pct"] <= 100
    # K/V of 2 x 8 x 4,096 and 1 x 8 x 32,768 token-heads: 4x apart, so the end's DRAM bytes follow each shape's cache
    assert got[2]["dram_bytes"] > 2 * got[0]["dram_bytes"]


CONTIGUOUS = [(i, s) for i, s in enumerate(GRID) if not s.page_size]


@pytest.mark.parametrize("index", [i for i, _ in CONTIGUOUS], ids=[s.id for _, s in CONTIGUOUS])
def test_flex_attention_as_a_decode_peer_matches_the_fp32_reference(index):
    """The decode peer flex_attention compiled (as the decode set times it) on the grid's contiguous caches, judged
    as a step is; its launch captured in a CUDA graph gives the same output (the hot mode replays one)."""
    import torch

    from lab.measure.decode_peers import DecodeFlexPeer

    peer = DecodeFlexPeer()

    def call(q, k, v, lens, table, out):
        out.copy_(peer.bind(q, k, v, lens, table)())

    result = check_decode_case("flex_attention", call, GRID[index], index)
    assert result["passed"], result
    x = GRID[index].random_inputs(generator=torch.Generator().manual_seed(index))
    launch = peer.bind(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"])
    eager = launch().clone()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = launch()
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(captured, eager)


def test_nsight_compute_profiles_flex_attention_as_a_decode_peer(tmp_path):
    from lab.measure.decode_profile import profile_decode
    from lab.measure.ncu_process import find_ncu

    if find_ncu() is None:
        pytest.skip("no ncu (Nsight Compute) here")
    got = profile_decode(["flex_attention"], "2,32,8,128,4096,bf16", tmp_path)
    assert got[0]["ok"] and got[0]["duration_us"] > 0, got[0].get("reason")
