"""GPU tests (issue 20): what a launch on the wrong stream would break, and the configurations the
study times besides the ladder's steps, on the full correctness grid.

- A variant captured in a CUDA graph on a side stream, then replayed: a launch that ignored the
  stream it is given (the legacy default stream, or a stream of its own) either fails the capture
  (an implicit launch on the legacy stream is illegal while another stream captures) or runs at
  capture time and leaves the graph empty, so the replay leaves the NaN-filled output as it was.
- A launch on a side stream behind a GPU sleep and the copy of its inputs: a launch on another
  stream would run before the copy, on the stale (zero) inputs.
- Launches on four streams at once, and 1100 launches in a row on one: a kernel that keeps state in
  global memory between launches (step 35's tile queue: a counter pair a launch, of 1024, put back
  to zero by the launch's last CTA) would hand two concurrent launches one counter, or start a
  launch from a counter the one before left behind.
- The knock-out builds (lab.kernels.switches.run_configs: each branch end with one switch off) and the
  committed tuned dispatch (kernels/variants/dispatch_<tuned kernel>.json, once a tuning run has chosen one), and each configuration the
  table names, judged by lab.measure.check's rule on lab.measure.check.grid(), as the ladder's steps are.
"""

import pytest

from lab.kernels import switches, variants
from lab.measure import check
from lab.studies.tuning import dispatch as td

pytestmark = pytest.mark.gpu

CASES = check.grid()
KNOCKOUTS = switches.run_configs(variants.names())  # impl -> (kernel, defines, applies_to)
TABLE = td.read_table()
CONFIGS = sorted({e["impl"] for e in TABLE["classes"].values()})  # the tuned table's configurations
TUNED = TABLE["variant"] + "+tuned"
GRAPH_CASES = [check.Case(2, 3, 129, 64, True), check.Case(1, 4, 300, 128, False, check.CUSTOM_SCALE)]


@pytest.fixture(scope="session")
def configured():
    """The knock-outs and the tuned table's configurations, built (cached) and loaded, and the
    tuned dispatch itself."""
    from lab.kernels import build

    configs = {i: (kernel, defines) for i, (kernel, defines, _) in KNOCKOUTS.items()}
    configs.update({e["impl"]: (TABLE["variant"], e.get("defines", {})) for e in TABLE["classes"].values()})
    results = build.build_all(list({k for k, _ in configs.values()}), configs=configs, progress=lambda s: None)
    failed = {n: r.log[-2000:] for n, r in results.items() if not r.ok}
    assert not failed, f"configurations failed to build: {failed}"
    loaded = {n: r.load() for n, r in results.items()}
    loaded[TUNED] = td.load()
    return loaded


@pytest.fixture(scope="session")
def config_references():
    return check.ReferenceCache(max_entries=2)


@pytest.mark.parametrize("name", [*KNOCKOUTS, *CONFIGS, TUNED])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_configuration_matches_reference(case, name, configured, config_references):
    result = check.check_case(name, configured[name], case, config_references)
    if result.unsupported:  # a bf16 or grouped-query case the configuration does not take: not taken, not run
        pytest.skip(result.unsupported)
    assert result.passed, result.explain()


def test_the_tuned_dispatch_runs_the_tables_configuration_for_its_class(configured):
    attn = configured[TUNED]
    for cls, entry in TABLE["classes"].items():
        D, causal, length = cls.split("-")
        S = 512 if length == "short" else 4096
        assert attn.kernel_for(int(D[1:]), causal == "causal", S).name == entry["impl"]
    assert attn.kernel_for(128, False, 100_000).name == TABLE["variant"]


def _kernel(name, configured):
    return configured[name] if name in configured else variants.load(name)


def _tolerance(q, k, v, case, ref) -> float:
    """lab.measure.check's rule (check.tolerance): 2 x SDPA's max abs error against the fp32 reference,
    plus a slack scaled to the element type; SDPA with enable_gqa where K/V have fewer heads."""
    import torch

    gqa = {"enable_gqa": True} if k.shape[1] != q.shape[1] else {}
    sdpa = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=case.causal, scale=case.scale, **gqa)
    return check.tolerance((sdpa.float() - ref).abs().max().item(), case.shape.dtype)


@pytest.mark.parametrize("name", [*variants.names(), TUNED])
@pytest.mark.parametrize("case", GRAPH_CASES, ids=[c.id for c in GRAPH_CASES])
def test_a_graph_captured_on_a_side_stream_replays_the_launch(case, name, configured):
    import torch

    attn = _kernel(name, configured)
    q, k, v = (t.clone() for t in check.make_inputs(case))
    ref = check.reference(q, k, v, case.causal, case.scale)
    tolerance = _tolerance(q, k, v, case, ref)
    out = torch.full_like(q, float("nan"))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture (module load, shared-memory attributes)
        attn.launch(q, k, v, out, case.causal, case.scale)
    torch.cuda.synchronize()
    out.fill_(float("nan"))
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        attn.launch(q, k, v, out, case.causal, case.scale)
    torch.cuda.synchronize()
    assert bool(torch.isnan(out).all()), "the launch ran at capture time instead of being captured"

    graph.replay()
    torch.cuda.synchronize()
    assert bool(torch.isfinite(out).all()), "the replay did not write the output (the launch escaped the graph)"
    err = (out.float() - ref).abs().max().item()
    assert err <= tolerance, f"{name} {case.id}: max abs err {err:.3g} > {tolerance:.3g} after replay"

    # the graph reads its inputs at replay time: new inputs in the same buffers give their result
    q2, k2, v2 = (torch.randn_like(t) for t in (q, k, v))
    for dst, src in zip((q, k, v), (q2, k2, v2)):
        dst.copy_(src)
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    ref2 = check.reference(q2, k2, v2, case.causal, case.scale)
    err2 = (out.float() - ref2).abs().max().item()
    assert err2 <= _tolerance(q2, k2, v2, case, ref2), f"{name} {case.id}: replay on new inputs: max abs err {err2:.3g}"


@pytest.mark.parametrize("name", [*variants.names(), TUNED])
def test_a_launch_waits_for_the_work_queued_before_it_on_its_stream(name, configured):
    import torch

    case = check.Case(1, 2, 300, 128, False)
    attn = _kernel(name, configured)
    src = check.make_inputs(case)
    ref = check.reference(*src, case.causal, case.scale)
    q, k, v = (torch.zeros_like(t) for t in src)  # valid only after the copies below
    out = torch.full_like(q, float("nan"))
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)  # ~30 ms: a launch on another stream would run meanwhile
        for dst, s in zip((q, k, v), src):
            dst.copy_(s)
        attn.launch(q, k, v, out, case.causal, case.scale)
    torch.cuda.synchronize()
    err = (out.float() - ref).abs().max().item()
    assert bool(torch.isfinite(out).all()) and err <= _tolerance(*src, case, ref), (
        f"{name}: max abs err {err:.3g}: the kernel did not run behind the work queued on the current stream")


# (B, H, S, D, causal, H_kv): a launch step 35 feeds from its counter on an H100 or H200 (132 SMs; its
# 4 MB of K/V fit one section of either's L2, 50 or 60 MiB: 128 query heads x 16 query tiles = 2048
# >= 4 x 396 CTAs, about five tiles a CTA; tests/test_tile_queue.py checks the rule at this case);
# grouped K/V, so the steps before model inputs (28, 29) do not take it. The study's multi-head
# shapes all keep the static list.
COUNTER_CASE = (4, 32, 1024, 64, True, 4)


@pytest.mark.parametrize("name", variants.names())
def test_launches_on_four_streams_at_once_each_give_their_own_result(name):
    import torch

    # COUNTER_CASE, each launch its own scale, so its own inputs (the seed)
    cases = [check.Case(*COUNTER_CASE[:5], 0.05 + 0.01 * n, COUNTER_CASE[5]) for n in range(12)]
    if variants.get(name).not_taken(cases[0].shape):  # before building it
        pytest.skip(variants.get(name).not_taken(cases[0].shape))
    attn = variants.load(name)
    streams = [torch.cuda.Stream() for _ in range(4)]
    inputs = [check.make_inputs(case) for case in cases]
    outs = [torch.full_like(q, float("nan")) for q, _, _ in inputs]
    torch.cuda.synchronize()
    for n, (case, (q, k, v), out) in enumerate(zip(cases, inputs, outs)):
        with torch.cuda.stream(streams[n % 4]):
            attn.launch(q, k, v, out, case.causal, case.scale)
    torch.cuda.synchronize()
    for n, (case, (q, k, v), out) in enumerate(zip(cases, inputs, outs)):
        ref = check.reference(q, k, v, case.causal, case.scale)
        err, tolerance = (out.float() - ref).abs().max().item(), _tolerance(q, k, v, case, ref)
        assert bool(torch.isfinite(out).all()) and err <= tolerance, (
            f"{name}: launch {n} of 12 on four streams: max abs err {err:.3g} > {tolerance:.3g}")


@pytest.mark.parametrize("name", variants.names())
def test_1100_launches_in_a_row_each_give_the_result(name):
    import torch

    case = check.Case(*COUNTER_CASE[:5], None, COUNTER_CASE[5])
    if variants.get(name).not_taken(case.shape):  # before building it
        pytest.skip(variants.get(name).not_taken(case.shape))
    attn = variants.load(name)
    q, k, v = check.make_inputs(case)
    ref = check.reference(q, k, v, case.causal, case.scale)
    tolerance = _tolerance(q, k, v, case, ref)
    out = torch.empty_like(q)
    for n in range(1100):
        out.fill_(float("nan"))
        attn.launch(q, k, v, out, case.causal, case.scale)
        if n % 100 == 99 or n >= 1090:  # every hundredth, and the last ten after the 1024 counters wrapped
            err = (out.float() - ref).abs().max().item()
            assert bool(torch.isfinite(out).all()) and err <= tolerance, (
                f"{name}: launch {n + 1} of 1100: max abs err {err:.3g} > {tolerance:.3g}")


@pytest.mark.parametrize("name", variants.names())
def test_a_graph_replayed_again_and_again_gives_the_result_each_time(name):
    """A captured launch keeps the counter pair it took at capture time: every replay starts from
    where the last one left it, so a counter not put back to zero would hand the next replay no work
    (a NaN output). Replayed five times on new inputs in the same buffers."""
    import torch

    case = check.Case(*COUNTER_CASE[:5], None, COUNTER_CASE[5])
    if variants.get(name).not_taken(case.shape):  # before building it
        pytest.skip(variants.get(name).not_taken(case.shape))
    attn = variants.load(name)
    q, k, v = check.make_inputs(case)
    out = torch.full_like(q, float("nan"))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture
        attn.launch(q, k, v, out, case.causal, case.scale)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        attn.launch(q, k, v, out, case.causal, case.scale)
    torch.cuda.synchronize()
    for n in range(5):
        for t in (q, k, v):
            t.copy_(torch.randn_like(t))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ref = check.reference(q, k, v, case.causal, case.scale)
        err, tolerance = (out.float() - ref).abs().max().item(), _tolerance(q, k, v, case, ref)
        assert bool(torch.isfinite(out).all()) and err <= tolerance, (
            f"{name}: replay {n + 1} of 5: max abs err {err:.3g} > {tolerance:.3g}")
