"""The correctness grid shared out over the run's GPUs (issue 49): one child process a GPU
(CUDA_VISIBLE_DEVICES its GPU) checks every n-th case of the grid, says each case it finishes on a line of
its own, and writes its results to a file the stage reads back; the stage merges them in the grid's
order, so correctness.json is the same list a single process writes. A part whose child fails is checked
again in the stage's own process, so that no case goes unchecked. The timing's replicates have their own
pool (lab.studies.gpu_pool's executor), and the profile's shapes their own threads (their work is already
child processes: lab.studies.profiling.profile_run). With one GPU the stage checks in its own process.

    results = check_shared(rec, cases, ["0", "1"], check_here)   # what stage_correctness does
    python -m lab.studies.correctness_child RUN_DIR --part K --parts N --out FILE   # one child: K, K+N, ...
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

TICK = "case done: "  # how a child's line says it finished a case (the case's id follows)


def shares(items: list, parts: int) -> list[list]:
    """Part k of `parts`: items k, k + parts, k + 2 parts, ... (every part gets long and short cases alike:
    the grid is ordered by size)."""
    if parts < 1:
        raise ValueError(f"parts={parts}: at least 1")
    return [items[k::parts] for k in range(parts)]


def merge(parts: list[list]) -> list:
    """The items of shares(items, len(parts)) back in their order (each part's results in its items' order)."""
    longest = max((len(p) for p in parts), default=0)
    return [p[i] for i in range(longest) for p in parts if i < len(p)]


def child_command(run_dir, part: int, parts: int, out) -> list[str]:
    """One GPU's child (lab.studies.correctness_child): part `part` of `parts` of the run's grid, written to `out`."""
    return [sys.executable, "-m", "lab.studies.correctness_child", str(run_dir), "--part", str(part), "--parts",
            str(parts), "--out", str(out)]


def run_children(commands: list[list[str]], gpus: list[str], progress=print, tick=None) -> list[int]:
    """Run commands[k] with CUDA_VISIBLE_DEVICES gpus[k], all side by side, from the repository; pass their
    lines on (prefixed with the GPU) and their TICK lines to `tick`. The exit codes, in order."""
    from lab.kernels.manifest import REPO

    procs = [subprocess.Popen(cmd, cwd=REPO, text=True, bufsize=1, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env={**os.environ, "CUDA_VISIBLE_DEVICES": gpu})
             for cmd, gpu in zip(commands, gpus)]

    def relay(proc, gpu) -> None:
        for line in proc.stdout:
            line = line.rstrip("\n")
            if line.startswith(TICK):
                if tick is not None:
                    tick(line[len(TICK):])
            elif line.strip():
                progress(f"  [GPU {gpu}] {line.strip()}")

    readers = [threading.Thread(target=relay, args=(proc, gpu), daemon=True) for proc, gpu in zip(procs, gpus)]
    for t in readers:
        t.start()
    codes = [proc.wait() for proc in procs]
    for t in readers:
        t.join()
    return codes


def check_shared(rec, cases: list, gpus: list[str], check_here, progress=print, tick=None,
                 command=child_command) -> list:
    """Every case of `cases` checked by one child a GPU of `gpus` (CUDA_VISIBLE_DEVICES entries), as
    lab.measure.check.run_grid's CaseResults in run_grid's order (case-major). A child's lines are passed
    on (prefixed with its GPU) and its finished cases ticked; a part whose child exits non-zero or leaves no
    results is checked in this process (`check_here(cases)`: the stage's run_grid over the run's kernels)."""
    from lab.measure import check as checks

    parts = shares(list(cases), len(gpus))
    results: list[list | None] = [None] * len(gpus)
    with tempfile.TemporaryDirectory(prefix="gpu-share-") as tmp:
        outs = [Path(tmp) / f"part{k}.json" for k in range(len(gpus))]
        progress(f"  {len(cases)} cases over {len(gpus)} GPUs, one process a GPU")
        codes = run_children([command(rec.dir, k, len(gpus), outs[k]) for k in range(len(gpus))], gpus, progress, tick)
        for k, (code, out) in enumerate(zip(codes, outs)):
            got = json.loads(out.read_text()) if code == 0 and out.exists() else {}
            if got.get("cases") == [c.id for c in parts[k]]:  # the child checked the cases asked of it
                results[k] = [checks.CaseResult(**r) for r in got["results"]]
    for k, part in enumerate(parts):
        if results[k] is None:
            progress(f"  the part on GPU {gpus[k]} exited with code {codes[k]} and left no results for its cases: "
                     f"its {len(part)} cases are checked here")
            results[k] = list(check_here(part))
    # each case's results (one a kernel) stay together: merge whole cases, then flatten
    per_case = [_by_case(part_results, len(part)) for part_results, part in zip(results, parts)]
    return [r for case in merge(per_case) for r in case]


def _by_case(results: list, n_cases: int) -> list[list]:
    """A part's results (case-major, the same number a case) as one list a case."""
    if n_cases == 0:
        return []
    if len(results) % n_cases:
        raise ValueError(f"{len(results)} results for {n_cases} cases: not the same number a case")
    each = len(results) // n_cases
    return [results[i * each:(i + 1) * each] for i in range(n_cases)]
