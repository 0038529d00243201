"""Every command's bad input: a failing exit code (2 for `python -m lab ...` and the project's other
command lines) and one line of the project's own on stderr that names the problem, never a traceback.
`make` targets stop with make's own one-line `Error`, which names the variable at fault.

The `python -m ...` rows run in this process (main(argv), as `python -m` calls it; a few of them also
as a real subprocess below), the `make` rows as make runs them."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from lab.kernels.manifest import REPO
from lab.report import committed

NO_GPU = argparse.Namespace(cuda=argparse.Namespace(is_available=lambda: False))

RUN = committed.default_run()  # a run that exists: the committed report's

# (module, argv, what the one line must contain)
PYTHON_ROWS = [
    ("lab", ["nope"], "invalid choice: 'nope'"),
    ("lab", ["compare", "--threshold", "-5"], "--threshold: -5 must lie strictly between 0 and 1"),
    ("lab", ["compare", "--threshold", "1.5"], "--threshold: 1.5 must lie strictly between 0 and 1"),
    ("lab", ["compare", "--threshold", "two"], "--threshold: 'two' is not a number"),
    ("lab", ["compare", "nope"], "run 'nope': no such run under"),
    ("lab", ["compare", RUN, "nope"], "base 'nope': no such run under"),
    ("lab", ["replicate", RUN], "the following arguments are required: base"),
    ("lab", ["replicate", "nope", RUN], "run 'nope': no such run"),
    ("lab", ["check", "--variants", "nope"], "--variants nope: unknown variant 'nope'; known: baseline"),
    ("lab", ["build", "--variants", "wmma,tma~no_nope"], "no_nope"),
    ("lab", ["bench", "--shape", "4,16,abc,64"], "S = 'abc' is not a whole number"),
    ("lab", ["bench", "--shape", "4,16,512"], "3 of the 4 numbers B,H,S,D"),
    ("lab", ["bench", "--shape", "4,16,512,64,caual"], "word 'caual' is not taken there"),
    ("lab", ["bench", "--shape", "4,16,512,64,kv3"], "H_kv = 3 must be at least 1 and divide the query heads H = 16"),
    ("lab", ["bench", "--samples", "0"], "--samples: 0 must be more than 0"),
    ("lab", ["bench", "--cap", "-1"], "--cap: -1 must be more than 0"),
    ("lab", ["bench", "--variants", "uniform_descriptors,flash_attn3"], "'flash_attn3' is a peer, not a step"),
    ("lab", ["bench", "--peers", "fa9,sdpa_cudnn"], "--peers fa9,sdpa_cudnn: unknown peer(s) fa9; known: sdpa_"),
    ("lab", ["sanitize", "--tools", "memcheck,leakcheck"], "unknown tool(s) leakcheck; known: memcheck"),
    ("lab", ["run", "--shapes", "nonsense"], "SHAPES='nonsense'"),
    ("lab", ["run", "--modes", "warm"], "a comma-separated subset of hot, cold"),
    ("lab", ["tune", "--trials", "many"], "--trials: invalid int value"),
    ("lab", ["tune", "--knobs", "bc64,nope"], "KNOBS: nope not a tunable of"),
    ("lab.pipeline", ["--shapes", "4,16,4096,x"], "D = 'x' is not a whole number"),
    ("lab.pipeline", ["--replicates", "0"], "REPLICATES"),
    ("lab.pipeline", ["--variants", "padded"], "no CUDA GPU on this machine, so no new run is measured and --variants"),
    ("lab.report", ["nope"], "no run 'nope' under"),
    ("lab.report", [RUN, "--base", "nope"], "no run 'nope' under"),
    ("lab.report.docs", ["nope"], "no run 'nope' under"),
    ("lab.report.data_index", ["--supersede", "data/runs/nope"], "not in HEAD's tree"),
    ("lab.report.data_index", ["--nope"], "unrecognized arguments: --nope"),
]


def _main(module: str):
    import importlib

    return importlib.import_module("lab.__main__" if module == "lab" else module).main


@pytest.mark.parametrize("module, argv, needle", PYTHON_ROWS, ids=[f"{m} {' '.join(a)}" for m, a, _ in PYTHON_ROWS])
def test_python_commands_refuse_bad_input_in_one_line(module, argv, needle, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", NO_GPU)  # nothing may reach a GPU, nor need one to refuse
    from lab import pipeline

    monkeypatch.setattr(pipeline, "execute", lambda *a, **k: pytest.fail("a notebook ran despite bad input"))
    try:
        code = _main(module)(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in err, err
    assert lines[0].startswith(f"python -m {module}"), "the line says which command refused"


@pytest.mark.parametrize("argv, needle", [
    (["-m", "lab", "compare", "--threshold", "-5"], "--threshold: -5 must lie strictly between 0 and 1"),
    (["-m", "lab.report.docs", "nope"], "no run 'nope'"),
])
def test_as_a_process_too(argv, needle):
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr, proc.stderr


MAKE_ROWS = [
    (["ablation", "VARIANT=padded"], "VARIANT=padded is not a parameter of `make ablation`, which takes VARIANTS"),
    (["report", "RUNN=x"], "RUNN=x is not a parameter of `make report`, which takes RUN BASE"),
    (["bench", "SHAPES=large"], "SHAPES=large is not a parameter of `make bench`, which takes SHAPE VARIANTS"),
    (["test", "VARIANTS=wmma"], "VARIANTS=wmma is not a parameter of `make test`"),
    (["VARIANTS=wmma"], "is not a parameter of `make help`, which takes none"),
    (["tune", "VARIANTS=wmma"], "which takes VARIANT SHAPES"),
]


@pytest.mark.parametrize("argv, needle", MAKE_ROWS, ids=[" ".join(a) for a, _ in MAKE_ROWS])
def test_make_refuses_a_variable_its_targets_do_not_read(argv, needle):
    proc = subprocess.run(["make", "--no-print-directory", *argv], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "", proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and lines[0].startswith("Makefile:"), proc.stderr


def test_make_passes_on_the_variables_it_reads():
    """The other side of the rule: a target's own variables pass make's check (a dry run)."""
    for argv in (["ablation", "VARIANTS=wmma", "SHAPES=large"], ["report", "docs", "RUN=a", "BASE=b"],
                 ["test", "PYTHON=python3", "TEST_WORKERS=1"]):
        proc = subprocess.run(["make", "-n", "--no-print-directory", *argv], capture_output=True, text=True, cwd=REPO,
                              timeout=60)
        assert proc.returncode == 0, (argv, proc.stderr)
