"""The correctness checker (lab.measure.check) against fake kernels on the CPU (issue 20).

Each fake breaks one of the checker's rules (module docstring of lab.measure.check): it leaves an element
unwritten, writes its inputs, gives a different result on its second call, puts a NaN or an Inf
in its output, ignores `out`, is just over the tolerance, raises. The checker must fail each, for
the right reason, and pass the fakes that are correct; the tolerance (2 x SDPA's error + 1e-3)
and the fp32 reference are checked against a float64 computation written out here.
"""

import math

import pytest
import torch

from lab.measure import check

CASE = check.Case(2, 3, 17, 64, True)
SCALED = check.Case(2, 3, 17, 128, False, check.CUSTOM_SCALE)


@pytest.fixture
def refs():
    return check.ReferenceCache(device="cpu")


def _attention64(q, k, v, causal, scale):
    """Attention in float64 with an explicit softmax: a different computation from lab.measure.check's."""
    q, k, v = (t.double() for t in (q, k, v))
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ k.transpose(-1, -2) * scale
    if causal:
        S = q.shape[2]
        s = s + torch.triu(torch.full((S, S), -math.inf, dtype=torch.float64), diagonal=1)
    w = torch.exp(s - s.max(-1, keepdim=True).values)
    return (w / w.sum(-1, keepdim=True)) @ v


def good(q, k, v, is_causal=False, scale=None, out=None):
    out.copy_(_attention64(q, k, v, is_causal, scale).to(out.dtype))
    return out


def _fake(edit):
    """A kernel that computes the right answer, then applies edit(out, q, k, v, call)."""
    calls = []

    def attn(q, k, v, is_causal=False, scale=None, out=None):
        calls.append(1)
        good(q, k, v, is_causal, scale, out)
        edit(out, q, k, v, len(calls))
        return out

    return attn


def test_the_reference_is_attention(refs):
    for case in (CASE, SCALED, check.Case(1, 1, 1, 64, True), check.Case(1, 2, 129, 64, False)):
        q, k, v, ref, _ = refs.get(case)
        assert ref.dtype == torch.float32 and ref.shape == q.shape
        torch.testing.assert_close(ref.double(), _attention64(q, k, v, case.causal, case.scale), atol=1e-5, rtol=1e-5)
    # causal: the first query sees only the first key, so its output is v's first row
    q, k, v, ref, _ = refs.get(CASE)
    torch.testing.assert_close(ref[:, :, 0], v[:, :, 0].float())


@pytest.mark.parametrize("case", [CASE, SCALED], ids=["causal", "scaled"])
def test_inputs_are_fresh_seeded_normals_and_the_tolerance_follows_sdpa(case, refs):
    q, k, v, ref, sdpa_err = refs.get(case)
    assert q.dtype == torch.float16 and not torch.equal(q, k) and not torch.equal(k, v)
    assert 0.5 < float(q.float().std()) < 1.5 and bool((q != 0).any())
    again = check.make_inputs(case, "cpu")
    assert all(torch.equal(a, b) for a, b in zip(again, (q, k, v)))  # seeded by the case
    # SDPA's own fp16 error against a float64 computation, with the case's mask and scale
    sdpa = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=case.causal, scale=case.scale)
    expected = float((sdpa.double() - _attention64(q, k, v, case.causal, case.scale)).abs().max())
    assert sdpa_err == pytest.approx(expected, abs=1e-6) and sdpa_err < 2e-3
    r = check.check_case("good", good, case, refs)
    assert r.tolerance == pytest.approx(2 * sdpa_err + 1e-3)
    assert r.passed and r.explain() == f"good {case.id}: ok"
    # the record names the case it judged
    assert (r.variant, r.case, r.B, r.H, r.S, r.D, r.causal, r.scale) == ("good", case.id, case.B, case.H, case.S,
                                                                          case.D, case.causal, case.scale)
    assert r.sdpa_max_abs_err == sdpa_err and r.error == r.unsupported == ""
    # the float64 result rounded to fp16: at most half a unit in the last place, 2^-10 for |x| < 4
    assert r.finite and r.inputs_unchanged and r.deterministic and r.max_abs_err <= 2 ** -10 + 1e-6


def _unwritten(out, q, k, v, call):
    out[1, 2, 16, 63] = float("nan")  # as the NaN fill left it: the last element never written


def _writes_q(out, q, k, v, call):
    if call % 2 == 0:  # after computing its second output of a case: both outputs are right
        q[0, 0, 5] += 1


def _writes_v_once(out, q, k, v, call):
    if call % 2 == 0:
        v[1, 1, 5] = -v[1, 1, 5]


def _second_call_differs(out, q, k, v, call):
    if call % 2 == 0:
        out[0, 0, 3, 7] += 2 ** -6


def _second_call_nan(out, q, k, v, call):
    if call % 2 == 0:
        out[0, 0, 3, 7] = float("nan")


def _nan(out, q, k, v, call):
    out[0, 1, 2, 3] = float("nan")


def _inf(out, q, k, v, call):
    out[1, 0, 0, 0] = float("inf")


def _minus_inf(out, q, k, v, call):
    out[1, 0, 0, 0] = -float("inf")


@pytest.mark.parametrize("edit, reason, flags", [
    (_unwritten, "NaN/Inf in output", dict(finite=False)),
    (_nan, "NaN/Inf in output", dict(finite=False)),
    (_inf, "NaN/Inf in output", dict(finite=False)),
    (_minus_inf, "NaN/Inf in output", dict(finite=False)),
    (_writes_q, "inputs modified", dict(inputs_unchanged=False)),
    (_writes_v_once, "inputs modified", dict(inputs_unchanged=False)),
    (_second_call_differs, "second call differs", dict(deterministic=False)),
    (_second_call_nan, "second call differs", dict(deterministic=False)),
])
def test_each_broken_rule_fails_the_case_for_its_reason(edit, reason, flags, refs):
    r = check.check_case("fake", _fake(edit), CASE, refs)
    assert not r.passed, r.explain()
    if not flags.get("finite", True):  # a non-finite output has no finite error either
        reason += f"; max abs err inf > tolerance {r.tolerance:.3g}"
    assert r.explain() == f"fake {CASE.id}: {reason}"
    for key, value in flags.items():
        assert getattr(r, key) is value
    others = {"finite", "inputs_unchanged", "deterministic"} - set(flags)
    assert all(getattr(r, key) for key in others), r.explain()  # only the broken rule is reported broken
    assert r.error == "" and r.unsupported == ""
    if not flags.get("finite", True):
        assert r.max_abs_err == math.inf
    else:
        assert r.max_abs_err <= r.tolerance


def test_a_kernel_that_ignores_out_fails(refs):
    def returns_a_new_tensor(q, k, v, is_causal=False, scale=None, out=None):
        return _attention64(q, k, v, is_causal, scale).half()

    r = check.check_case("new_tensor", returns_a_new_tensor, CASE, refs)
    assert not r.passed and not r.finite and "NaN/Inf in output" in r.explain()


@pytest.mark.parametrize("factor, passed", [(0.98, True), (1.02, False)])
def test_the_error_is_judged_against_the_tolerance_at_its_edge(factor, passed, refs):
    q, k, v, ref, sdpa_err = refs.get(CASE)
    tolerance = 2 * sdpa_err + 1e-3
    i = ref.abs().argmin()  # an element near 0, where fp16 resolves a shift of ~tolerance finely

    def shifted(out, q_, k_, v_, call):
        out.view(-1)[i] = ref.view(-1)[i] + factor * tolerance

    r = check.check_case("shifted", _fake(shifted), CASE, refs)
    assert r.max_abs_err == pytest.approx(factor * tolerance, rel=0.005)
    assert r.passed is passed and r.finite and r.deterministic and r.inputs_unchanged
    assert ("> tolerance" in r.explain()) is not passed


def test_the_scale_argument_is_honoured(refs):
    def ignores_scale(q, k, v, is_causal=False, scale=None, out=None):
        return good(q, k, v, is_causal, None, out)

    assert check.check_case("good", good, SCALED, refs).passed
    r = check.check_case("ignores_scale", ignores_scale, SCALED, refs)
    assert not r.passed and "max abs err" in r.explain()
    wrong_mask = check.check_case("not_causal", lambda q, k, v, is_causal, scale, out: good(q, k, v, False, scale, out),
                                  CASE, refs)
    assert not wrong_mask.passed


def test_a_raising_kernel_is_a_failed_case_and_an_unsupported_one_is_neither(refs):
    def raises(q, k, v, is_causal=False, scale=None, out=None):
        raise RuntimeError("launch failed: too many resources requested")

    def unsupported(q, k, v, is_causal=False, scale=None, out=None):
        raise check.Unsupported("D = 64 only")

    r = check.check_case("raises", raises, CASE, refs)
    assert not r.passed and not r.unsupported
    assert r.explain() == "raises B2H3-S17-D64-causal: RuntimeError: launch failed: too many resources requested"
    # a kernel that raised is credited with nothing
    assert math.isnan(r.max_abs_err) and (r.finite, r.inputs_unchanged, r.deterministic) == (False, False, False)
    assert r.passed is False
    u = check.check_case("unsupported", unsupported, CASE, refs)
    assert not u.passed and u.unsupported == "D = 64 only" and not u.error
    assert u.explain() == "unsupported B2H3-S17-D64-causal: unsupported (D = 64 only)"
    # it did not run: its inputs are untouched, and nothing else is claimed
    assert math.isnan(u.max_abs_err) and (u.finite, u.inputs_unchanged, u.deterministic) == (False, True, False)
    assert u.passed is False  # False, not merely falsy: the record goes to JSON
    assert (u.B, u.S, u.tolerance) == (CASE.B, CASE.S, r.tolerance)


def test_an_error_exactly_at_the_tolerance_passes():
    # "at most 2x SDPA's error plus 1e-3": a cache entry with a zero reference and an SDPA error of
    # 0.2495 makes the tolerance exactly 2 x 0.2495 + 0.001 = 0.5, which fp16 holds exactly
    refs = check.ReferenceCache(device="cpu")
    q, k, v = check.make_inputs(CASE, "cpu")
    refs._entries[CASE] = (q, k, v, torch.zeros(q.shape), 0.2495)

    def off_by(value):
        def attn(q, k, v, is_causal=False, scale=None, out=None):
            out.zero_()
            out[0, 0, 0, 0] = value

        return attn

    at = check.check_case("at", off_by(0.5), CASE, refs)
    assert at.tolerance == 0.5 and at.max_abs_err == 0.5 and at.passed and at.explain().endswith(": ok")
    over = check.check_case("over", off_by(0.50048828125), CASE, refs)  # the next fp16 value above 0.5
    assert not over.passed and "max abs err 0.5 > tolerance 0.5" in over.explain()


def test_every_broken_rule_is_named_in_the_explanation(refs):
    def everything_wrong(out, q, k, v, call):
        _nan(out, q, k, v, call)
        _writes_q(out, q, k, v, call)

    r = check.check_case("bad", _fake(everything_wrong), CASE, refs)
    assert r.explain() == (f"bad {CASE.id}: NaN/Inf in output; max abs err inf > tolerance {r.tolerance:.3g}; "
                           "inputs modified")


def test_the_reference_cache_keeps_the_latest_cases():
    refs = check.ReferenceCache(max_entries=2, device="cpu")
    cases = [check.Case(1, 1, s, 64, False) for s in (3, 5, 7)]
    first = refs.get(cases[0])
    assert refs.get(cases[0]) is first  # computed once
    for case in cases[1:]:
        refs.get(case)
    assert list(refs._entries) == cases[1:]  # the oldest left
    assert refs.get(cases[0]) is not first and list(refs._entries) == [cases[2], cases[0]]


def test_a_kernel_that_writes_its_inputs_does_not_fail_the_kernels_checked_after_it():
    # run_grid shares each case's inputs among the kernels; a kernel that writes them must fail
    # alone, not leave corrupted inputs to the next kernel (which would be judged against the
    # reference of the original inputs)
    def writes_then_raises(q, k, v, is_causal=False, scale=None, out=None):
        k.mul_(2)
        raise RuntimeError("illegal address")

    kernels = {"writes_q": _fake(_writes_q), "good": good, "writes_then_raises": writes_then_raises, "good2": good}
    results = list(check.run_grid(kernels, [CASE, SCALED], device="cpu"))
    assert [r.variant for r in results] == list(kernels) * 2
    for r in results:
        if r.variant.startswith("writes"):
            assert not r.passed and not r.inputs_unchanged, r.explain()
        else:
            assert r.passed, r.explain()


def _unsupported(q, k, v, is_causal=False, scale=None, out=None):
    raise check.Unsupported("no")


def test_run_grid_checks_every_kernel_on_every_case_and_reports_failures():
    lines = []
    kernels = {"good": good, "nan": _fake(_nan), "unsupported": _unsupported}
    results = list(check.run_grid(kernels, [CASE, SCALED], progress=lines.append, device="cpu"))
    assert [(r.variant, r.case) for r in results] == [(n, c.id) for c in (CASE, SCALED) for n in kernels]
    assert [r.passed for r in results] == [True, False, False] * 2
    # a failure is reported as it comes; a pass and an unsupported case are not
    assert [line.split(";")[0] for line in lines] == ["  FAIL nan B2H3-S17-D64-causal: NaN/Inf in output",
                                                      "  FAIL nan B2H3-S17-D128-full-scale0.3: NaN/Inf in output"]


def test_run_grid_ticks_once_a_case_with_its_id_after_every_kernel_ran_on_it():
    """The stage's progress bar (lab.progress) advances by case and names the case just checked."""
    seen, results = [], []
    for r in check.run_grid({"good": good, "nan": _fake(_nan)}, [CASE, SCALED], device="cpu",
                            tick=lambda case_id: seen.append((case_id, len(results)))):
        results.append(r)
    assert seen == [(CASE.id, 2), (SCALED.id, 4)]


def test_run_grid_reports_progress_every_20_cases_and_defaults_to_the_full_grid(monkeypatch):
    small = [check.Case(1, 1, s, 64, c) for s in range(1, 21) for c in (False, True)]  # 40 cases
    monkeypatch.setattr(check, "grid", lambda: small)
    results, lines = [], []
    for r in check.run_grid({"good": good}, progress=lambda s: lines.append((len(results), s)), device="cpu"):
        results.append(r)
    assert [r.case for r in results] == [c.id for c in small] and all(r.passed for r in results)
    # said after the 20th and the 40th case, each once
    assert lines == [(20, "  checked 20/40 cases"), (40, "  checked 40/40 cases")]


def test_run_grid_checks_on_the_gpu_unless_told(monkeypatch):
    devices = []
    monkeypatch.setattr(check, "ReferenceCache", lambda device: devices.append(device))
    assert list(check.run_grid({}, [])) == [] and list(check.run_grid({}, [], device="cpu")) == []
    assert devices == ["cuda", "cpu"]


def test_a_peer_adapter_is_non_causal_unless_asked():
    class Peer:
        name = "fake_peer"

        def unsupported_reason(self, q, k, v, causal, scale):
            return "no custom scale" if scale is not None else ""

        def context(self):
            import contextlib

            return contextlib.nullcontext()

        def bind(self, q, k, v, causal, scale):
            return lambda: _attention64(q, k, v, causal, scale).half()

        def output_bhsd(self, out):
            return out

    attn = check.peer_as_attn(Peer())
    q, k, v = check.make_inputs(CASE, "cpu")
    torch.testing.assert_close(attn(q, k, v).double(), _attention64(q, k, v, False, None), atol=1e-3, rtol=0)
    assert check.check_case("fake_peer", attn, CASE, check.ReferenceCache(device="cpu")).passed
    scaled = check.check_case("fake_peer", attn, SCALED, check.ReferenceCache(device="cpu"))
    assert scaled.unsupported == "no custom scale" and not scaled.error


def test_the_reference_is_computed_on_the_inputs_device():
    # on a GPU the reference must live where the kernel's output does; on the CPU the "meta" device
    # (shapes and dtypes, no data) stands in for it: every tensor the reference makes follows q
    q, k, v = (torch.empty(2, 3, 17, 64, dtype=torch.float16, device="meta") for _ in range(3))
    for causal in (True, False):
        ref = check.reference(q, k, v, causal, None)
        assert ref.device.type == "meta" and ref.dtype == torch.float32 and ref.shape == q.shape


def test_a_case_the_kernel_does_not_take_is_recorded_and_never_launched(refs):
    # a step that declares fp16 only, asked for a bf16 case with grouped K/V heads: not launched,
    # no reference computed; the record says why, keeps the case's fields and passes nothing
    case = check.Case(1, 4, 17, 64, True, None, 2, "bf16")
    asked, launched = [], []

    def attn(*a, **kw):
        launched.append(1)

    attn.not_taken = lambda shape: asked.append(shape) or "takes fp16 only"
    r = check.check_case("step", attn, case, refs)
    assert asked == [case.shape] and launched == [] and refs._entries == {}
    assert (r.variant, r.case, r.B, r.H, r.S, r.D, r.causal, r.scale, r.H_kv, r.dtype) == (
        "step", case.id, 1, 4, 17, 64, True, None, 2, "bf16")
    assert r.unsupported == "not taken: takes fp16 only" and r.error == ""
    assert (r.finite, r.inputs_unchanged, r.deterministic, r.passed) == (False, True, False, False)
    assert all(math.isnan(x) for x in (r.sdpa_max_abs_err, r.tolerance, r.max_abs_err))


def test_a_bf16_case_is_judged_by_its_own_tolerance(refs):
    # bf16's unit roundoff is 8 x fp16's: the slack is 8e-3 instead of 1e-3 (2 x SDPA's error + slack)
    case = check.Case(1, 4, 17, 64, False, None, 2, "bf16")
    r = check.check_case("good", good, case, refs)
    assert (r.H_kv, r.dtype) == (2, "bf16")
    assert r.tolerance == pytest.approx(2 * r.sdpa_max_abs_err + 8e-3, rel=1e-12)
