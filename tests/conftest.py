"""GPU tests carry the `gpu` marker and are skipped, with the reason, where no CUDA GPU is visible."""

import pytest


def _cuda_reason() -> str | None:
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return f"no CUDA GPU visible (torch {torch.__version__})"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _cuda_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
