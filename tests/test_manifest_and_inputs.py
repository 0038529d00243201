"""CPU tests: the manifest agrees with the kernel files, and bad inputs raise the promised errors."""

import re

import pytest
import torch

from lab.kernels import variants
from lab.kernels.variants import VARIANTS_DIR, check_inputs

from tests.ladder import SM90_END as END  # the sm_90a branch's last step


def test_names_in_chain_order():
    assert variants.names()[:6] == ["baseline", "restrict", "coalesced", "padded", "warp_specialized", "wmma"]


def test_manifest_matches_files():
    listed = [v.file for v in variants.manifest()]
    on_disk = sorted(p.name for p in VARIANTS_DIR.glob("*.cu"))
    assert listed == on_disk, "every .cu file in kernels/variants is in the manifest, in file order"


def test_each_step_names_an_earlier_parent_and_opens_with_its_idea():
    chain = variants.manifest()
    for i, v in enumerate(chain):
        same_problem = {u.name for u in chain[:i] if u.problem == v.problem}  # each problem is a tree of its own
        assert v.parent in same_problem if same_problem else v.parent == ""
        if v.arch == variants.PORTABLE:  # a portable kernel cannot build on an arch-specific one
            assert variants.get(v.parent or v.name).arch == variants.PORTABLE, v.name
        first = v.path.read_text().splitlines()[0]
        assert first.startswith(f"// Step {v.index} - "), f"{v.file} opens with its step number and idea"
        header = "\n".join(line for line in v.path.read_text().splitlines() if line.startswith("//"))
        assert "Hypothesis:" in header and "Predicted:" in header or not v.parent, f"{v.file} states its hypothesis"
        low, high = v.speedup
        assert 0 < low <= high
        assert v.metric in variants.METRICS and v.direction in ("up", "down")


def test_manifest_predictions_match_file_headers():
    # The file header's "Predicted: a-bx" range is the manifest's speedup range.
    for v in variants.manifest()[1:]:  # every step but the first; a second root (decode) predicts too
        m = re.search(r"Predicted: (?:within noise to )?(?:([\d.]+)x?-)?([\d.]+)x", v.path.read_text())
        assert m, f"{v.file} has a 'Predicted: ...x' line"
        assert float(m.group(2)) == v.speedup[1], f"{v.file}: predicted high end differs from the manifest"


def test_a_tree_manifest_is_accepted_and_its_branches_keep_their_own_order(tree_manifest):
    tree_manifest()  # steps 19 and 20: portable, branching off step 8 after the sm_90a steps 9-18
    chain = variants.manifest()
    assert [v.index for v in chain[-2:]] == [19, 20] and variants.get("portable_a").parent == "async_pipeline"
    portable = ["baseline", "restrict", "coalesced", "padded", "warp_specialized", "wmma", "mma_sync",
                "async_pipeline", "portable_a", "portable_b"]
    hopper = [v.name for v in chain[8:18]]
    assert variants.branches() == {"portable": portable, "sm_90a": hopper}
    assert variants.branch_order() == portable + hopper
    assert variants.branch_order(["ftz_exp2", "portable_b", "wgmma", "baseline"]) == \
        ["baseline", "portable_b", "wgmma", "ftz_exp2"]
    assert variants.branch("portable_b") == "portable" and variants.branch("wgmma") == "sm_90a"
    assert variants.lineage("portable_b") == portable
    assert variants.lineage("ftz_exp2") == portable[:8] + hopper
    assert variants.lineage("baseline") == ["baseline"]
    # the last step of each branch in manifest order, whatever order the names come in
    assert variants.branch_ends(variants.names()) == ["portable_b", "ftz_exp2"]
    assert variants.branch_ends(["wgmma", "portable_a", "mma_sync"]) == ["portable_a", "wgmma"]


@pytest.mark.parametrize("steps, message", [
    ([("later_parent", "19_x.cu", "portable_b"), ("portable_b", "20_y.cu", "async_pipeline")],
     r"'later_parent' \(step 19\) has parent 'portable_b', which comes later in the manifest; a step's parent "
     r"must be an earlier step of the manifest"),
    ([("orphan", "19_x.cu", "nope")], r"'orphan' \(step 19\) has parent 'nope', which is not a step of the manifest"),
    ([("self", "19_x.cu", "self")], r"'self' \(step 19\) has parent 'self', itself"),
    ([("rootless", "19_x.cu", "")], r"'rootless' \(step 19\) has parent = \"\", which only the first prefill step may have"),
    ([("wmma", "19_x.cu", "async_pipeline")], r"step 19 is named 'wmma' like an earlier step"),
])
def test_a_parent_that_is_not_an_earlier_step_is_refused(tree_manifest, steps, message):
    tree_manifest(steps)
    with pytest.raises(ValueError, match=message):
        variants.manifest()


def test_the_first_step_must_be_the_root(tree_manifest):
    vdir = tree_manifest()
    text = (vdir / "manifest.toml").read_text().replace('parent = ""', 'parent = "restrict"', 1)
    (vdir / "manifest.toml").write_text(text)
    with pytest.raises(ValueError, match=r"the first prefill step 'baseline' has parent 'restrict'; it must have parent = "):
        variants.manifest()


DECODE_ROOT = '\n[[variant]]\nname = "d_root"\nfile = "19_x.cu"\nparent = ""\nproblem = "decode"\n' + \
    'title = "t"\nchange = "c"\nhypothesis = "h"\nmetric = "dram_throughput"\ndirection = "up"\n' + \
    'speedup = [1.0, 1.0]\narch = "portable"\n'


def _decode_step(name, file, parent, problem="decode"):
    return DECODE_ROOT.replace('"d_root"', f'"{name}"').replace('"19_x.cu"', f'"{file}"') \
        .replace('parent = ""', f'parent = "{parent}"').replace('"decode"', f'"{problem}"')


def test_a_second_problem_is_a_tree_of_its_own_with_its_own_root_and_end(tree_manifest):
    vdir = tree_manifest([])  # steps 1-18
    for f in ("19_x.cu", "20_y.cu"):
        (vdir / f).write_text("// x\n")
    (vdir / "manifest.toml").write_text((vdir / "manifest.toml").read_text() + DECODE_ROOT
                                         + _decode_step("d_next", "20_y.cu", "d_root"))
    from lab.kernels import manifest

    manifest.manifest.cache_clear()
    assert variants.names()[-1] == "ftz_exp2" and "d_root" not in variants.names()  # the prefill ladder
    assert variants.names(problem="decode") == ["d_root", "d_next"]
    assert variants.names(problem=None)[-3:] == ["ftz_exp2", "d_root", "d_next"]
    assert variants.branch("d_next") == "decode" and variants.get("d_next").arch == "portable"
    every = variants.names(problem=None)
    assert variants.branch_ends(every) == ["async_pipeline", "ftz_exp2", "d_next"]
    assert manifest.headline_end(every) == "ftz_exp2"  # never the decode end
    assert variants.lineage("d_next") == ["d_root", "d_next"]


@pytest.mark.parametrize("extra, message", [
    (DECODE_ROOT + _decode_step("d_bad", "20_y.cu", "async_pipeline"),
     r"'d_bad' \(step 20\) has parent 'async_pipeline', a prefill step"),
    (_decode_step("d_bad", "19_x.cu", "async_pipeline"),
     r"the first decode step 'd_bad' has parent 'async_pipeline'; it must have parent = \"\""),
    (DECODE_ROOT + _decode_step("d_two", "20_y.cu", ""), r"which only the first decode step may have"),
    (DECODE_ROOT.replace('"decode"', '"serving"'), r"problem = 'serving': one of \"prefill\", \"decode\""),
    (_decode_step("p_bad", "19_x.cu", "d_root", problem="prefill"), r"'p_bad' \(step 19\) has parent 'd_root'"),
])
def test_a_step_crossing_problems_or_a_second_root_is_refused(tree_manifest, extra, message):
    vdir = tree_manifest([])
    for f in ("19_x.cu", "20_y.cu"):
        (vdir / f).write_text("// x\n")
    (vdir / "manifest.toml").write_text((vdir / "manifest.toml").read_text() + extra)
    from lab.kernels import manifest

    manifest.manifest.cache_clear()
    with pytest.raises(ValueError, match=message):
        variants.manifest()


def test_unknown_variant_is_a_clear_error():
    with pytest.raises(KeyError, match="unknown variant 'nope'"):
        variants.get("nope")


def _qkv(shape=(2, 3, 17, 64), dtype=torch.float16):
    return tuple(torch.randn(shape).to(dtype) for _ in range(3))


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: _qkv(dtype=torch.float32), "must be float16"),
        (lambda: _qkv(dtype=torch.bfloat16), "must be CUDA tensors"),  # bf16 is taken (by the steps declaring it)
        (lambda: _qkv(shape=(3, 17, 64)), "must be 4-D"),
        (lambda: _qkv(shape=(1, 2, 3, 17, 64)), "must be 4-D"),
        (lambda: _qkv(shape=(2, 3, 17, 32)), r"head dim D must be one of \(64, 128\)"),
        (lambda: _qkv(shape=(2, 3, 17, 96)), r"head dim D must be one of \(64, 128\)"),
        (lambda: _qkv(shape=(2, 3, 0, 64)), "at least 1"),
        (lambda: (*_qkv()[:2], torch.randn(2, 3, 18, 64).half()), "same shape"),
        (lambda: (_qkv()[0], torch.randn(2, 4, 17, 64).half(), _qkv()[2]), "same shape"),
        (lambda: (torch.randn(2, 3, 64, 17).half().transpose(-1, -2), *_qkv()[1:]), "contiguous"),
        (lambda: ([[1.0]], *_qkv()[1:]), "must be a torch.Tensor"),
        (lambda: _qkv(), "must be CUDA tensors"),  # valid in every other way: only the device is wrong
    ],
)
def test_bad_inputs_raise_value_error_naming_the_constraint(make, message):
    with pytest.raises(ValueError, match=message):
        check_inputs(*make())


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan"), float("inf"), "0.1"])
def test_bad_scale(scale):
    with pytest.raises(ValueError, match="scale must be a finite positive number"):
        check_inputs(*_qkv(), scale=scale)


def test_misaligned_input_rejected():
    flat = torch.randn(2 * 3 * 17 * 64 + 1).half()
    q = flat[1:].view(2, 3, 17, 64)  # contiguous, but 2 bytes past a 16-byte boundary
    with pytest.raises(ValueError, match="16-byte boundary"):
        check_inputs(q, *_qkv()[1:])


class _FakeLibrary:
    """Stands in for a built variant so the wrapper's checks run without a GPU."""

    def __init__(self):
        self.calls = 0

        def fa_forward(*args):
            self.calls += 1
            return 0

        self.fa_forward = fa_forward


def test_callable_validates_before_launching():
    lib = _FakeLibrary()
    attn = variants.KernelAttention.__new__(variants.KernelAttention)
    attn.name, attn.build_key, attn._forward = "fake", "0" * 64, lib.fa_forward
    with pytest.raises(ValueError, match="head dim D"):
        attn(*_qkv(shape=(1, 1, 8, 80)))
    with pytest.raises(ValueError, match="must be CUDA tensors"):
        attn(*_qkv())
    assert lib.calls == 0, "nothing reaches the kernel when validation fails"


def test_judged_at_names_a_shape_or_nothing():
    from lab.kernels.shape import Shape, is_spec

    assert is_spec("4,16,4096,128") and is_spec("1,8,512,64,causal")
    assert not is_spec("4,16,4096") and not is_spec("4,16,4096,128,1")
    assert Shape.parse("1,8,512,64,causal") == Shape(1, 8, 512, 64, True)
    for v in variants.manifest():
        shape = variants.judged_shape(v)
        assert shape is None if not v.judged_at else shape.spec == v.judged_at.replace(" ", "")


def test_the_tuned_kernel_is_the_one_step_the_tunable_tables_name(monkeypatch):
    """Tuning, the dispatch and the factorial default to manifest.tuned_kernel(): the sm_90a branch's
    end in the real manifest; any step its [[tunable]] tables name alone; an error otherwise."""
    from lab.kernels import manifest

    assert manifest.tuned_kernel() == manifest.headline_end(manifest.names()) == END
    monkeypatch.setattr(manifest, "tables", lambda text=None: {"tunable": [{"variant": "model_inputs"}] * 2})
    assert manifest.tuned_kernel() == "model_inputs"
    for bad in ([], [{"variant": "model_inputs"}, {"variant": "wide_kv_tiles_long_d64"}], [{"variant": "no_such_step"}], [{}]):
        monkeypatch.setattr(manifest, "tables", lambda text=None, b=bad: {"tunable": b})
        with pytest.raises(ValueError, match="must name one known step"):
            manifest.tuned_kernel()
