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
