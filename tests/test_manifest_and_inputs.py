"""CPU tests: the manifest agrees with the kernel files, and bad inputs raise the promised errors."""

import re

import pytest
import torch

from lab import variants
from lab.variants import VARIANTS_DIR, check_inputs


def test_names_in_chain_order():
    assert variants.names()[:6] == ["baseline", "restrict", "coalesced", "padded", "warp_specialized", "wmma"]


def test_manifest_matches_files():
    listed = [v.file for v in variants.manifest()]
    on_disk = sorted(p.name for p in VARIANTS_DIR.glob("*.cu"))
    assert listed == on_disk, "every .cu file in kernels/variants is in the manifest, in file order"


def test_each_step_names_its_parent_and_opens_with_its_idea():
    chain = variants.manifest()
    for i, v in enumerate(chain):
        assert v.parent == (chain[i - 1].name if i else "")
        first = v.path.read_text().splitlines()[0]
        assert first.startswith(f"// Step {v.index} - "), f"{v.file} opens with its step number and idea"
        header = "\n".join(line for line in v.path.read_text().splitlines() if line.startswith("//"))
        assert "Hypothesis:" in header and "Predicted:" in header or i == 0, f"{v.file} states its hypothesis"
        low, high = v.speedup
        assert 0 < low <= high
        assert v.metric in variants.METRICS and v.direction in ("up", "down")


def test_manifest_predictions_match_file_headers():
    # The file header's "Predicted: a-bx" range is the manifest's speedup range.
    for v in variants.manifest()[1:]:
        m = re.search(r"Predicted: (?:within noise to )?(?:([\d.]+)x?-)?([\d.]+)x", v.path.read_text())
        assert m, f"{v.file} has a 'Predicted: ...x' line"
        assert float(m.group(2)) == v.speedup[1], f"{v.file}: predicted high end differs from the manifest"


def test_unknown_variant_is_a_clear_error():
    with pytest.raises(KeyError, match="unknown variant 'nope'"):
        variants.get("nope")


def _qkv(shape=(2, 3, 17, 64), dtype=torch.float16):
    return tuple(torch.randn(shape).to(dtype) for _ in range(3))


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: _qkv(dtype=torch.float32), "must be float16"),
        (lambda: _qkv(dtype=torch.bfloat16), "must be float16"),
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
    assert variants._is_shape_spec("4,16,4096,128") and variants._is_shape_spec("1,8,512,64,causal")
    assert not variants._is_shape_spec("4,16,4096") and not variants._is_shape_spec("4,16,4096,128,1")
    for v in variants.manifest():
        shape = variants.judged_shape(v)
        assert shape is None if not v.judged_at else shape[:4] == tuple(int(p) for p in v.judged_at.split(",")[:4])
