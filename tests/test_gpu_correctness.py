"""GPU tests: every variant against the fp32 reference on the full grid (lab.measure.check explains the
criteria), and through the public API with SDPA's calling conventions."""

import pytest

from lab.measure import check
from lab.kernels import variants

pytestmark = pytest.mark.gpu

CASES = check.grid()


@pytest.fixture(scope="session")
def kernels():
    from lab.kernels import build

    results = build.build_all()
    failed = {n: r.log for n, r in results.items() if not r.ok}
    assert not failed, f"variants failed to build: {failed}"
    return {n: r.load() for n, r in results.items()}


@pytest.fixture(scope="session")
def references():
    return check.ReferenceCache(max_entries=2)


@pytest.mark.parametrize("name", variants.names())
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_matches_reference(case, name, kernels, references):
    result = check.check_case(name, kernels[name], case, references)
    if result.unsupported:  # a bf16 or grouped-query case of a step that does not take it: not taken, not run
        pytest.skip(result.unsupported)
    assert result.passed, result.explain()


@pytest.mark.parametrize("name", variants.names())
def test_load_gives_sdpa_semantics(name):
    import torch
    import torch.nn.functional as F

    attn = variants.load(name)
    q, k, v = (torch.randn(2, 4, 200, 64, device="cuda", dtype=torch.float16) for _ in range(3))
    out = attn(q, k, v)  # default: non-causal, scale 1/sqrt(D)
    assert out.shape == q.shape and out.dtype == torch.float16 and out.is_contiguous()
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v), atol=2e-3, rtol=0)
    out = attn(q, k, v, is_causal=True, scale=0.2)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.2),
                               atol=2e-3, rtol=0)


# The launch's stream: tests/test_gpu_streams_and_configurations.py (a graph captured on a side stream,
# and a launch queued behind a GPU sleep; the comparison after a synchronize that was here would
# also pass for a kernel that ignored the stream).


MODEL_STEPS = [v.name for v in variants.manifest()
               if "bf16" in v.dtypes and v.kv_heads == "grouped" and v.problem == "prefill"]


@pytest.mark.parametrize("name", MODEL_STEPS)
@pytest.mark.parametrize("H, H_kv", [(8, 2), (6, 1), (4, 4)])
def test_model_inputs_give_sdpa_gqa_semantics(name, H, H_kv):
    """A step declaring bf16 and grouped K/V heads, called like SDPA with enable_gqa=True."""
    import torch
    import torch.nn.functional as F

    attn = variants.load(name)
    assert (attn.dtypes, attn.kv_heads) == (("fp16", "bf16"), "grouped")
    q = torch.randn(2, H, 200, 128, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(2, H_kv, 200, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    out = attn(q, k, v, is_causal=True)
    assert out.shape == q.shape and out.dtype == torch.bfloat16 and out.is_contiguous()
    gqa = {"enable_gqa": True} if H_kv != H else {}
    # bf16's unit roundoff is 2^-8: a few units at |O| <= 1 (lab.measure.check states the grid's rule)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True, **gqa), atol=2e-2, rtol=0)
    bad = torch.randn(2, H + 1, 200, 128, device="cuda", dtype=torch.bfloat16)  # H + 1 never divides H
    with pytest.raises(ValueError, match="must divide the query heads"):
        attn(q, bad, bad)
