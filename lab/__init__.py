"""Ablation study of hand-written FlashAttention forward kernels.

The package in layers, each importing only those below it (tests/test_layers.py checks this):

0. `lab.cli`       what every command line shares: bad input is one line naming the constraint,
                   exit code 2 (`OneLineParser`, `refuse`, argparse types with ranges);
   `lab.progress`  where a long stage is (a file a progress bar reads) and its ETA;
1. `lab.kernels`   the kernel side: the manifest (the ladder as a tree, switches, tunables), the
                   problem shape, builds, the callable, knock-out switches;
2. `lab.measure`   the measuring side: correctness, the sanitizer, timing, clocks, peers,
                   statistics, the profiler, run records;
3. `lab.studies`   what is measured: a run's parameters, shape sets and stages, one shape
                   measured, its replicates (fresh processes) and their calibration, knock-outs'
                   factorial, the regression gate, tuning (`lab.studies.tuning`);
4. `lab.report`    the report of a run folder (and the generated parts of README.md and docs/),
                   and two runs side by side (does it replicate?);
5. entry points    `lab.pipeline` (`make ablation`), `python -m lab` (`lab.__main__`),
                   `lab.notebook_support` (what the notebooks call), `lab.jupyter_kernel`.

The public face is `lab.variants`:

    >>> from lab import variants
    >>> attn = variants.load("wmma")            # builds (or reuses the cached build)
"""


def __getattr__(name: str):
    # `from lab import variants` (the public API) without importing the kernel side with every
    # `import lab.measure.stats`: the module is loaded on first use.
    if name == "variants":
        from lab.kernels import variants

        return variants
    raise AttributeError(f"module 'lab' has no attribute {name!r}")
