"""GPU tests carry the `gpu` marker. Where no CUDA GPU is visible they are deselected at collection and
counted in one summary line with the reason (not reported one by one: there are about 15,000); with
`-m gpu` (`make test-gpu`) they are kept and skip, with the reason, so that asking for them is never
silently a no-op."""

import pytest

GPU_DESELECTED = "gpu_deselected"  # a worker's count, sent to the controller (pytest-xdist's workeroutput)


@pytest.fixture(autouse=True, scope="session")
def _progress_files_out_of_the_tree(tmp_path_factory):
    """The stages' progress files (lab.progress) go to a temporary folder, the replicates' processes' too."""
    import os

    from lab import progress

    os.environ[progress.ENV] = str(tmp_path_factory.mktemp("progress"))
    yield


def _cuda_reason() -> str | None:
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return f"no CUDA GPU visible (torch {torch.__version__})"
    return None


def pytest_configure(config):
    """Where the output is not a terminal (CI, a log), the progress dots fill 160 columns, not 80: half
    the lines for the same dots (pytest reads COLUMNS when it wraps them)."""
    import os
    import sys

    if not sys.stdout.isatty():
        os.environ.setdefault("COLUMNS", "160")


def _asked_for_gpu_tests(config) -> bool:
    return "gpu" in (config.getoption("markexpr", "") or "").replace("not gpu", "")


# The files that take longest on a fresh clone (nvcc, whole reports), started first: under
# `make test`'s `--dist loadfile --no-loadscope-reorder` a file goes whole to the next free worker in
# collection order, so a long file started last would hold the run up alone (--durations shows them).
LONG_FIRST = ("test_knockouts.py", "test_compile.py", "test_notebooks.py", "test_report.py", "test_docs.py",
              "test_report_sections.py")


def _long_first(items) -> None:
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file's own order kept


def pytest_collection_modifyitems(config, items):
    _long_first(items)
    reason = _cuda_reason()
    if reason is None:
        return
    gpu = [item for item in items if "gpu" in item.keywords]
    if _asked_for_gpu_tests(config):
        for item in gpu:
            item.add_marker(pytest.mark.skip(reason=reason))
        return
    if gpu:
        config.hook.pytest_deselected(items=gpu)
        items[:] = [item for item in items if "gpu" not in item.keywords]
    config._gpu_deselected = (len(gpu), reason)
    if hasattr(config, "workeroutput"):
        config.workeroutput[GPU_DESELECTED] = [len(gpu), reason]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist's controller: each worker collected (and deselected) the same GPU tests."""
    out = getattr(node, "workeroutput", {}).get(GPU_DESELECTED)
    if out:
        node.config._gpu_deselected = tuple(out)


def pytest_terminal_summary(terminalreporter, config):
    count, reason = getattr(config, "_gpu_deselected", (0, ""))
    if count:
        terminalreporter.write_line(f"{count:,} GPU tests (marker gpu) not run: {reason}; "
                                    f"`make test-gpu` runs them on a GPU machine")


# --- a tree-shaped manifest for CPU tests --------------------------------------------------------

# Two portable steps appended after step 18 that branch off step 8, in a manifest cut back to
# steps 1-18 (the real portable steps 19 on, and what names them, are left out: see _first_18).
TREE_STEPS = (("portable_a", "19_portable_a.cu", "async_pipeline"), ("portable_b", "20_portable_b.cu", "portable_a"))


def _variant_toml(name: str, file: str, parent: str, arch: str = "portable") -> str:
    return f'''
[[variant]]
name = "{name}"
file = "{file}"
parent = "{parent}"
title = "+{name}"
change = "A test step: {name}."
hypothesis = "A test hypothesis."
metric = "tensor_pipe_active"
direction = "up"
speedup = [1.0, 1.2]
arch = "{arch}"
'''


def _first_18(text: str) -> str:
    """The manifest's text without the [[variant]] tables after step 18 and the [[switch]] and
    [[structural]] tables of those steps, so that tests can add their own steps 19 and 20."""
    import re
    import tomllib

    later = {v["name"] for v in tomllib.loads(text)["variant"][18:]}

    def names_later_step(block: str) -> bool:
        key = "name" if block.startswith("[[variant]]") else "kernel"
        return block.startswith(("[[variant]]", "[[switch]]", "[[structural]]")) and any(
            re.search(rf'(?m)^{key} = "{re.escape(n)}"$', block) for n in later)

    keep = [b for b in re.split(r"(?m)^(?=\[\[)", text) if not names_later_step(b)]
    return "".join(keep)


@pytest.fixture
def tree_manifest(tmp_path, monkeypatch):
    """`write(extra)` makes the real manifest plus `extra` (TOML, or (name, file, parent[, arch])
    tuples) the one lab.kernels.manifest reads, with every kernel file beside it (new ones copied from
    step 8); the cached manifest is cleared before and after. Returns write."""
    from lab.kernels import manifest

    real_dir, real_text = manifest.VARIANTS_DIR, _first_18(manifest.MANIFEST_PATH.read_text())
    vdir = tmp_path / "variants"
    vdir.mkdir()
    for src in real_dir.glob("*.cu"):
        (vdir / src.name).symlink_to(src)

    def write(extra=TREE_STEPS):
        if not isinstance(extra, str):
            for step in extra:
                path = vdir / step[1]
                if not path.exists():
                    path.write_text((real_dir / "08_async_pipeline.cu").read_text() + f"\n// {step[0]}\n")
            extra = "".join(_variant_toml(*step) for step in extra)
        (vdir / "manifest.toml").write_text(real_text + extra)
        manifest.manifest.cache_clear()
        return vdir

    monkeypatch.setattr(manifest, "VARIANTS_DIR", vdir)
    monkeypatch.setattr(manifest, "MANIFEST_PATH", vdir / "manifest.toml")
    manifest.manifest.cache_clear()
    yield write
    manifest.manifest.cache_clear()


# --- synthetic run folders with replicates (no GPU) ----------------------------------------------

SYNTH_STEPS = ("wgmma_overlap", "tma", "two_ctas_per_sm", "tma_q_first", "unmasked_interior", "ftz_exp2")
# true medians (us) at the headline shape: each step's speedup over its parent is fixed by these
SYNTH_MEDIANS = {"wgmma_overlap": 200.0, "tma": 160.0, "two_ctas_per_sm": 150.0, "tma_q_first": 148.0,
                 "unmasked_interior": 132.0, "ftz_exp2": 120.0, "ftz_exp2__aa": 120.0,
                 "ftz_exp2~no_tma": 140.0, "ftz_exp2~no_ftz_exp2": 132.0,
                 "sdpa_flash": 130.0, "sdpa_cudnn": 125.0}


def make_replicated_run(root, run_id, gpu="NVIDIA H200", replicates=3, tau=0.003, n=20, seed=0, medians=None,
                        modes=("hot",)):
    """A complete run folder at the headline shape: SYNTH_STEPS, two knock-outs, the A/A twin and two
    SDPA peers, `replicates` replicates of `n` samples each per (impl, mode). Each replicate shifts
    every impl's log latency by its own N(0, tau) (the between-replicate variance) and all of them
    by a shared process shift; samples scatter by 0.3 % within."""
    import numpy as np
    import pandas as pd

    from lab.measure import records
    from lab.studies.shapes import HEADLINE

    rng = np.random.default_rng(seed)
    medians = {**SYNTH_MEDIANS, **(medians or {})}
    rec = records.RunRecord(run_id=run_id, root=root)
    rec.write_json("env.json", {"gpu": gpu, "utc": "2099-01-01T00:00:00+00:00"})
    rec.write_json("params.json", {"variants": list(SYNTH_STEPS), "shapes": [list(HEADLINE.astuple())],
                                   "shape_scopes": ["ladder"], "modes": list(modes), "cap_s": 3.0, "rel_ci": 0.005,
                                   "min_samples": 50, "profile": False, "check": "none", "knockouts": True,
                                   "peers": ["sdpa_flash", "sdpa_cudnn"], "backends": ["flash", "cudnn"],
                                   "replicates": replicates, "seed": 0, "stop_guard": [0.99, 2.0]})
    rec.write_json("build.json", {s: {"source_hash": "h-" + s} for s in SYNTH_STEPS})
    rows = []
    for r in range(replicates):
        shift = rng.normal(0, 0.01)
        for mode in modes:
            for impl, med in medians.items():
                u = rng.normal(0, tau)
                for i, x in enumerate(med * np.exp(shift + u + rng.normal(0, 0.003, n))):
                    rows.append(dict(run_id=run_id, impl=impl, B=HEADLINE.B, H=HEADLINE.H, S=HEADLINE.S,
                                     D=HEADLINE.D, causal=HEADLINE.causal, dtype="float16", mode=mode, sample=i,
                                     latency_us=float(x), sm_clock_mhz=1980.0, throttled=False, replicate=r))
    rec.write_table("samples.parquet", pd.DataFrame(rows, columns=records.SAMPLE_COLUMNS))
    rec.write_json("stages.json", {"timing_s": 1.0})
    rec.finish("complete")
    return rec


@pytest.fixture
def replicated_run():
    return make_replicated_run


@pytest.fixture(autouse=True)
def _median_ci_rank_computed_anew():
    """median_ci's order-statistic rank is cached per (n, confidence) for the stopping rule's speed.
    Each test computes it anew: mutation testing runs a mutant of _median_ci_rank in a fork of a
    process whose cache is already warm, and a cached rank would hide the mutant from every test."""
    from lab.measure import stats

    stats.descriptive._cached_median_ci_rank.cache_clear()
