"""CPU tests of the inputs real models run (issue 22): a shape's K/V heads and element type, the
manifest's `dtypes` and `kv_heads`, and the validation of bf16 and grouped-query inputs. Every
expected text and number below is written out by hand, not computed by the code under test."""

import pytest

from lab.kernels.shape import Shape, is_spec, not_taken


# --- Shape: old forms unchanged, new ones parseable and file-safe ----------------------------------

@pytest.mark.parametrize("spec, id_, label, tuple_label, record", [
    ("4,16,4096,64", "B4-H16-S4096-D64-full", "(4, 16, 4096, 64) non-causal", "(4, 16, 4096, 64)",
     (4, 16, 4096, 64, False)),
    ("1,8,512,64,causal", "B1-H8-S512-D64-causal", "(1, 8, 512, 64) causal", "(1, 8, 512, 64, causal)",
     (1, 8, 512, 64, True)),
])
def test_plain_shapes_read_and_print_as_before(spec, id_, label, tuple_label, record):
    s = Shape.parse(spec)
    assert (s.spec, s.id, str(s), s.tuple_label, s.astuple()) == (spec, id_, label, tuple_label, record)
    assert s.H_kv == s.H and s.dtype == "fp16" and s.plain
    # a run record's 5-element list (shapes.json, params.json) and the defaults written out are one shape
    assert Shape.of(list(record)) == s == Shape(*record, H_kv=record[1], dtype="float16")
    assert hash(Shape.of(list(record))) == hash(Shape(*record, H_kv=record[1], dtype="fp16"))


@pytest.mark.parametrize("spec, id_, label, tuple_label, record", [
    ("4,32,2048,128,causal,kv8,bf16", "B4-H32-S2048-D128-causal-kv8-bf16",
     "(4, 32, 2048, 128) causal, 8 K/V heads, bf16", "(4, 32, 2048, 128, causal, kv8, bf16)",
     (4, 32, 2048, 128, True, 8, "bf16")),
    ("1,71,8192,64,causal,kv1,bf16", "B1-H71-S8192-D64-causal-kv1-bf16",
     "(1, 71, 8192, 64) causal, 1 K/V head, bf16", "(1, 71, 8192, 64, causal, kv1, bf16)",
     (1, 71, 8192, 64, True, 1, "bf16")),
    ("2,12,512,64,bf16", "B2-H12-S512-D64-full-bf16", "(2, 12, 512, 64) non-causal, bf16",
     "(2, 12, 512, 64, bf16)", (2, 12, 512, 64, False, 12, "bf16")),
    ("2,28,512,128,kv4", "B2-H28-S512-D128-full-kv4", "(2, 28, 512, 128) non-causal, 4 K/V heads",
     "(2, 28, 512, 128, kv4)", (2, 28, 512, 128, False, 4, "fp16")),
])
def test_model_shapes_have_a_spec_an_id_and_a_record_form(spec, id_, label, tuple_label, record):
    s = Shape.parse(spec)
    assert (s.spec, s.id, str(s), s.tuple_label, s.astuple()) == (spec, id_, label, tuple_label, record)
    assert not s.plain and Shape.of(list(record)) == s and Shape.parse(s.spec) == s
    assert s.kv_shape == (record[0], record[5], record[2], record[3]) and s.q_shape == record[:4]
    assert all(c.isalnum() or c == "-" for c in s.id), "the id names files (ncu CSVs)"


def test_kv_heads_equal_to_h_are_the_plain_layout():
    assert Shape.parse("2,8,64,64,kv8") == Shape(2, 8, 64, 64, False)
    assert Shape(2, 8, 64, 64, False, 8).spec == "2,8,64,64"
    assert Shape(2, 32, 64, 64, False, 8).group == 4 and Shape(2, 32, 64, 64, False, 1).group == 32
    assert Shape(2, 32, 64, 64, False, 8).kv_layout == "grouped" and Shape(2, 32, 64, 64, False).kv_layout == "same"


@pytest.mark.parametrize("text", ["4,32,2048,128,bf16,kv8", "4,32,2048,128,kv8,causal", "4,32,2048,128,fp32",
                                  "4,32,2048,128,kv", "4,32,2048,128,kvx", "4,32,2048,128,causal,causal",
                                  "4,16,4096,128,1"])
def test_words_out_of_order_or_unknown_are_refused_naming_the_form(text):
    assert not is_spec(text)
    with pytest.raises(ValueError, match=r"expected B,H,S,D\[,causal\]\[,kvN\]\[,fp16\|bf16\]"):
        Shape.parse(text)


@pytest.mark.parametrize("H, H_kv", [(32, 3), (28, 8), (12, 0), (8, 16)])
def test_kv_heads_must_divide_the_query_heads(H, H_kv):
    with pytest.raises(ValueError, match=rf"H_kv = {H_kv} must be at least 1 and divide the query heads H = {H}"):
        Shape(1, H, 64, 64, False, H_kv)


def test_an_unknown_dtype_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match=r"element type 'fp8': expected one of fp16, bf16"):
        Shape(1, 8, 64, 64, False, dtype="fp8")


def test_not_taken_names_the_constraint_and_the_implementation():
    assert not_taken("variant 'tma'", ["fp16"], "same", "float16", 16, 16) == ""
    assert not_taken("variant 'tma'", ["fp16"], "same", "bf16", 16, 16) == \
        "variant 'tma' takes float16 only (its manifest dtypes); got bfloat16"
    assert not_taken("variant 'tma'", ["fp16"], "same", "fp16", 32, 8) == \
        ("variant 'tma' takes as many K/V heads as query heads only (its manifest kv_heads = \"same\"); got 8 K/V "
         "heads for 32 query heads")
    assert not_taken("variant 'm'", ["fp16", "bf16"], "grouped", "bf16", 71, 1) == ""


# --- the manifest's dtypes and kv_heads ---------------------------------------------------------

def _step(name, file, parent, extra=""):
    return f'''
[[variant]]
name = "{name}"
file = "{file}"
parent = "{parent}"
title = "+{name}"
change = "A test step."
hypothesis = "A test hypothesis."
metric = "tensor_pipe_active"
direction = "up"
speedup = [1.0, 1.2]
arch = "portable"
{extra}'''


def test_steps_without_the_fields_take_fp16_and_equal_heads(tree_manifest):
    from lab.kernels import variants

    tree_manifest([("model_step", "19_model_step.cu", "async_pipeline")])
    for v in variants.manifest():
        assert (v.dtypes, v.kv_heads) == (("fp16",), "same"), v.name


def test_a_step_declaring_model_inputs_takes_them(tree_manifest):
    from lab.kernels import variants

    tree_manifest([("model_step", "19_model_step.cu", "async_pipeline")])  # the file
    tree_manifest(_step("model_step", "19_model_step.cu", "async_pipeline",
                        'dtypes = ["fp16", "bf16"]\nkv_heads = "grouped"\n'))
    v = variants.get("model_step")
    assert (v.dtypes, v.kv_heads) == (("fp16", "bf16"), "grouped")
    assert v.not_taken(Shape.parse("2,32,128,128,causal,kv8,bf16")) == ""
    assert v.not_taken(Shape.parse("2,71,128,64,kv1")) == ""
    assert variants.get("tma").not_taken(Shape.parse("2,32,128,128,bf16")) == \
        "variant 'tma' takes float16 only (its manifest dtypes); got bfloat16"


@pytest.mark.parametrize("fields, message", [
    ('dtypes = ["bf16"]', r"'bad' dtypes = \['bf16'\]: a list of distinct element types among \"fp16\", \"bf16\", "
                          r"with \"fp16\" in it"),
    ('dtypes = ["fp16", "fp8"]', r"'bad' dtypes = \['fp16', 'fp8'\]"),
    ('dtypes = ["fp16", "fp16"]', r"'bad' dtypes = \['fp16', 'fp16'\]"),
    ("dtypes = []", r"'bad' dtypes = \[\]"),
    ('kv_heads = "any"', r"'bad' kv_heads = 'any': one of \"same\", \"grouped\""),
])
def test_bad_inputs_fields_are_refused_naming_the_rule(tree_manifest, fields, message):
    from lab.kernels import variants

    tree_manifest([("bad", "19_bad.cu", "async_pipeline")])
    tree_manifest(_step("bad", "19_bad.cu", "async_pipeline", fields + "\n"))
    with pytest.raises(ValueError, match=message):
        variants.manifest()


# --- check_inputs and the callable ---------------------------------------------------------------

import torch  # noqa: E402

from lab.kernels import attention  # noqa: E402
from lab.kernels.attention import KernelAttention, Takes, check_inputs, library_inputs  # noqa: E402


def _t(shape, dtype=torch.float16):
    return torch.randn(shape).to(dtype)


def _gqa(B=2, H=8, H_kv=2, S=17, D=64, dtype=torch.bfloat16):
    return _t((B, H, S, D), dtype), _t((B, H_kv, S, D), dtype), _t((B, H_kv, S, D), dtype)


@pytest.mark.parametrize("make, message", [
    (lambda: (_t((2, 3, 17, 64), torch.float32),) * 3, r"q must be float16 or bfloat16, got torch.float32"),
    (lambda: (_t((2, 3, 17, 64)), _t((2, 3, 17, 64), torch.bfloat16), _t((2, 3, 17, 64))),
     r"mixed dtypes: q, k and v must share one element type, got q torch.float16, k torch.bfloat16, v torch.float16"),
    (lambda: (_t((2, 8, 17, 64)), _t((2, 4, 17, 64)), _t((2, 2, 17, 64))),
     r"k and v must have the same shape \(B, H_kv, S, D\), got k \(2, 4, 17, 64\) and v \(2, 2, 17, 64\): their K/V "
     r"head counts differ \(4 and 2\)"),
    (lambda: (_t((2, 8, 17, 64)), _t((2, 2, 18, 64)), _t((2, 2, 18, 64))),
     r"k and v must have q's B, S and D \(self-attention: as many keys as queries\), got q \(2, 8, 17, 64\), "
     r"k and v \(2, 2, 18, 64\)"),
    (lambda: (_t((2, 8, 17, 64)), _t((1, 2, 17, 64)), _t((1, 2, 17, 64))), r"k and v must have q's B, S and D"),
    (lambda: (_t((2, 6, 17, 64)), _t((2, 4, 17, 64)), _t((2, 4, 17, 64))),
     r"the K/V head count H_kv = 4 \(k's and v's dim 1\) must divide the query heads H = 6 \(q's dim 1\)"),
    # valid in every other way, bf16 with 4 query heads per K/V head, and MQA: only the device is wrong
    (lambda: _gqa(), "must be CUDA tensors"),
    (lambda: _gqa(H=71, H_kv=1), "must be CUDA tensors"),
])
def test_bad_model_inputs_raise_value_error_naming_the_constraint(make, message):
    with pytest.raises(ValueError, match=message):
        check_inputs(*make())


def test_a_variant_that_does_not_take_the_inputs_names_the_constraint_and_itself():
    fp16_mha = Takes("variant 'tma'", ("fp16",), "same")
    with pytest.raises(ValueError, match=r"^variant 'tma' takes float16 only \(its manifest dtypes\); got bfloat16$"):
        check_inputs(*_gqa(H_kv=8), takes=fp16_mha)
    with pytest.raises(ValueError, match=r"^variant 'tma' takes as many K/V heads as query heads only \(its manifest "
                                         r"kv_heads = \"same\"\); got 2 K/V heads for 8 query heads$"):
        check_inputs(*_gqa(dtype=torch.float16), takes=fp16_mha)
    with pytest.raises(ValueError, match="must be CUDA tensors"):  # what it takes passes every rule but the device
        check_inputs(*_gqa(H_kv=8, dtype=torch.float16), takes=fp16_mha)


class _Lib:
    """A built variant's exports without a GPU: fa_forward always; fa_forward_ex, fa_dtypes and
    fa_grouped_kv where given (None: not exported). Records every launch's arguments."""

    def __init__(self, ex=False, mask=None, grouped=None):
        self.calls = []
        self.fa_forward = lambda *a: self.calls.append(("fa_forward", a)) or 0
        if ex:
            self.fa_forward_ex = lambda *a: self.calls.append(("fa_forward_ex", a)) or 0
        if mask is not None:
            self.fa_dtypes = lambda: mask
        if grouped is not None:
            self.fa_grouped_kv = lambda: grouped


@pytest.mark.parametrize("lib, takes", [
    (_Lib(), (("fp16",), "same")),
    (_Lib(mask=1, grouped=0), (("fp16",), "same")),
    (_Lib(ex=True, mask=3, grouped=1), (("fp16", "bf16"), "grouped")),
    (_Lib(ex=True, mask=1, grouped=1), (("fp16",), "grouped")),
    (_Lib(ex=True, mask=3, grouped=0), (("fp16", "bf16"), "same")),
])
def test_what_a_library_takes_comes_from_its_exports(lib, takes):
    assert library_inputs(lib) == takes


@pytest.mark.parametrize("lib, message", [
    (_Lib(ex=True, mask=2, grouped=1), r"fa_dtypes\(\) = 2: bits of 1 = fp16, 2 = bf16, fp16 among them"),
    (_Lib(ex=True, mask=7, grouped=1), r"fa_dtypes\(\) = 7"),
    (_Lib(ex=True, grouped=1), "exports fa_forward_ex without fa_dtypes"),
    (_Lib(ex=True), "exports fa_forward_ex without fa_dtypes and fa_grouped_kv"),
    (_Lib(mask=3, grouped=0), "claim more than fp16 with H_kv = H, but it exports no fa_forward_ex"),
    (_Lib(mask=1, grouped=1), "claim more than fp16 with H_kv = H, but it exports no fa_forward_ex"),
])
def test_contradicting_exports_are_refused(lib, message):
    with pytest.raises(RuntimeError, match=message):
        library_inputs(lib)


def test_a_library_disagreeing_with_its_manifest_is_refused_naming_both():
    with pytest.raises(RuntimeError, match=r"variant 'model_inputs': the library takes dtypes \['fp16'\], kv_heads "
                                           r"\"grouped\" \(fa_dtypes/fa_grouped_kv\) but the manifest declares dtypes "
                                           r"\['fp16', 'bf16'\], kv_heads \"grouped\""):
        KernelAttention("model_inputs", _Lib(ex=True, mask=1, grouped=1), "0" * 64,
                        declared=(("fp16", "bf16"), "grouped"))
    with pytest.raises(RuntimeError, match=r"the library takes dtypes \['fp16'\], kv_heads \"same\" .* the manifest "
                                           r"declares dtypes \['fp16', 'bf16'\]"):
        KernelAttention("model_inputs", _Lib(), "0" * 64, declared=(("fp16", "bf16"), "grouped"))
    agreed = KernelAttention("m", _Lib(ex=True, mask=3, grouped=1), "0" * 64, declared=(("fp16", "bf16"), "grouped"))
    assert agreed.takes == Takes("variant 'm'", ("fp16", "bf16"), "grouped")
    KernelAttention("m", _Lib(ex=True, mask=3, grouped=1), "0" * 64, declared=(("bf16", "fp16"), "grouped"))


@pytest.fixture
def cpu_stream(monkeypatch):
    """launch() asks torch for the current CUDA stream; on the CPU a stand-in stream 0."""
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: type("S", (), {"cuda_stream": 0})())


def test_launch_goes_through_fa_forward_ex_with_the_kv_heads_and_the_dtype_code(cpu_stream):
    lib = _Lib(ex=True, mask=3, grouped=1)
    attn = KernelAttention("m", lib, "0" * 64)
    q, k, v = _gqa(B=2, H=8, H_kv=2, S=17, D=64, dtype=torch.bfloat16)
    out = torch.empty_like(q)
    attn.launch(q, k, v, out, True, 0.25)
    (fn, args), = lib.calls
    # (q, k, v, o, B, H, H_kv, S, D, scale, causal, dtype, stream); the ABI's dtype 1 = bf16
    assert fn == "fa_forward_ex" and args[4:] == (2, 8, 2, 17, 64, 0.25, 1, 1, 0)
    attn.launch(*_gqa(H=4, H_kv=4, dtype=torch.float16), out, False)
    assert lib.calls[-1][0] == "fa_forward_ex" and lib.calls[-1][1][4:] == (2, 4, 4, 17, 64, 0.125, 0, 0, 0)


def test_launch_without_fa_forward_ex_calls_fa_forward(cpu_stream):
    lib = _Lib()
    q, k, v = _gqa(H=4, H_kv=4, dtype=torch.float16)
    KernelAttention("tma", lib, "0" * 64).launch(q, k, v, torch.empty_like(q), True, None)
    (fn, args), = lib.calls
    assert fn == "fa_forward" and args[4:] == (2, 4, 17, 64, 0.125, 1, 0)  # (.., B, H, S, D, 1/sqrt(64), causal, stream)


def test_out_must_have_qs_dtype(monkeypatch, cpu_stream):
    monkeypatch.setattr(attention, "check_inputs", lambda *a, **k: None)  # the device rule would stop a CPU test first
    lib = _Lib(ex=True, mask=3, grouped=1)
    q, k, v = _gqa()
    with pytest.raises(ValueError, match=r"out must be a contiguous tensor of q's shape \(2, 8, 17, 64\), dtype "
                                         r"\(torch.bfloat16\) and device \(cpu\), got \(2, 8, 17, 64\) torch.float16"):
        KernelAttention("m", lib, "0" * 64)(q, k, v, out=torch.empty(q.shape, dtype=torch.float16))
    assert lib.calls == [], "nothing reaches the kernel when validation fails"


# --- builds record what their library takes (build.json) ------------------------------------------

def test_a_build_record_says_what_it_takes_and_old_records_read_as_fp16_mha():
    from lab.kernels.build import BuildResult

    old = BuildResult(name="ftz_exp2~no_tma", ok=True)  # build.json before issue 22: no variant, dtypes, kv_heads
    assert old.step == "ftz_exp2" and old.declared() == (("fp16",), "same") and old.takes() == (("fp16",), "same")
    assert old.not_taken(Shape.parse("4,32,2048,128,causal,kv8,bf16")) == \
        "variant 'ftz_exp2~no_tma' takes float16 only (its manifest dtypes); got bfloat16"
    assert BuildResult(name="ftz_exp2@bc64=64", ok=True).step == "ftz_exp2"
    assert BuildResult(name="nope", ok=True).step == "" and BuildResult(name="nope", ok=True).declared() is None
    new = BuildResult(name="m", ok=True, variant="ftz_exp2", dtypes=["fp16", "bf16"], kv_heads="grouped")
    assert new.takes() == (("fp16", "bf16"), "grouped") and new.not_taken(Shape.parse("1,71,512,64,kv1,bf16")) == ""
    assert {"variant", "dtypes", "kv_heads"} <= set(new.summary())


def test_a_build_whose_library_contradicts_the_manifest_fails_naming_both(monkeypatch):
    from lab.kernels import build, variants

    result = build.BuildResult(name="tma", ok=True, library="/nowhere/lib.so")
    monkeypatch.setattr(build.ctypes, "CDLL", lambda path: _Lib(ex=True, mask=3, grouped=1))
    build._record_inputs(result, variants.get("tma"))
    assert not result.ok and result.log == ("variant 'tma': the library takes dtypes ['fp16', 'bf16'], kv_heads "
                                            "\"grouped\" (fa_dtypes/fa_grouped_kv) but the manifest declares dtypes "
                                            "['fp16'], kv_heads \"same\"")
    agreeing = build.BuildResult(name="tma", ok=True, library="/nowhere/lib.so")
    monkeypatch.setattr(build.ctypes, "CDLL", lambda path: _Lib())
    build._record_inputs(agreeing, variants.get("tma"))
    assert agreeing.ok and (agreeing.dtypes, agreeing.kv_heads) == (["fp16"], "same")


def test_the_sanitizer_runs_the_model_shapes_only_for_variants_that_take_them():
    from lab.measure import sanitize

    fp16_mha = KernelAttention("tma", _Lib(), "0" * 64)
    model = KernelAttention("m", _Lib(ex=True, mask=3, grouped=1), "0" * 64)
    assert sanitize.shapes_for(fp16_mha) == [Shape(*s) for s in sanitize.SHAPES]
    assert sanitize.shapes_for(model)[len(sanitize.SHAPES):] == list(sanitize.MODEL_SHAPES)
    # the model shapes cover bf16 and fp16, K/V heads shared by 2 and 4 query heads and by all (MQA), both D
    shapes = sanitize.MODEL_SHAPES
    assert {s.dtype for s in shapes} == {"fp16", "bf16"} and {s.D for s in shapes} == {64, 128}
    assert {s.H // s.H_kv for s in shapes} >= {2, 4} and any(s.H_kv == 1 for s in shapes)


def test_the_sanitizer_runs_each_problem_under_its_own_kernel_filter_and_needs_every_ran_line():
    """One sanitizer process a problem: the prefill kernels under attention_fwd, the decode steps (their
    decode_fwd and merge kernels) under decode_; a tool is clean only where each process exits 0 and says
    it ran each of its variants (a decode step with a failing grid case withholds its line)."""
    from types import SimpleNamespace

    from lab.measure import sanitize

    calls = []

    def runner(cmd, **kw):
        names = cmd[cmd.index("--target") + 1].split(",")
        calls.append((cmd[cmd.index("--tool") + 1], cmd[cmd.index("--kernel-name") + 1] if "--kernel-name" in cmd
                      else None, names))
        ran = [n for n in names if n != "no_l2_promotion" or cmd[2] != "racecheck"]  # a failing case there
        return SimpleNamespace(returncode=0, stdout="".join(f"ran {n}\n" for n in ran),
                               stderr="========= ERROR SUMMARY: 0 errors\n")

    out = sanitize.run(["tma", "tma~no_swizzle", "no_l2_promotion", "split_kv"], tools=("memcheck", "racecheck",
                       "initcheck"), progress=lambda *_: None, runner=runner)
    assert calls == [("memcheck", "kns=attention_fwd", ["tma", "tma~no_swizzle"]),
                     ("memcheck", "kns=decode_", ["no_l2_promotion", "split_kv"]),
                     ("racecheck", "kns=attention_fwd", ["tma", "tma~no_swizzle"]),
                     ("racecheck", "kns=decode_", ["no_l2_promotion", "split_kv"]),
                     ("initcheck", None, ["tma", "tma~no_swizzle"]), ("initcheck", None, ["no_l2_promotion", "split_kv"])]
    assert {t: r["clean"] for t, r in out.items()} == {"memcheck": True, "racecheck": False, "initcheck": True}
    assert out["memcheck"]["summary"] == "; ".join(["========= ERROR SUMMARY: 0 errors"] * 2)  # one a process
    assert sanitize.groups(["split_kv"]) == [(["split_kv"], "kns=decode_")]
