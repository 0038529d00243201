"""The correctness grid shared out over the run's GPUs (issue 49): one child process a GPU
(CUDA_VISIBLE_DEVICES its GPU) checks every n-th case of the grid, says each case it finishes on a line of
its own, and writes its results to a file the stage reads back; the stage merges them in the grid's
order, so correctness.json is the same list a single process writes. A part whose child fails is checked
again in the stage's own process, so that no case goes unchecked. The timing's replicates have their own
pool (lab.studies.gpu_pool's executor), and the profile's shapes their own threads (their work is already
child processes: lab.studies.profiling.profile_run). With one GPU the stage checks its grid in its own
process. The peers' cases go the same way, started first (start_shared) and collected after the grid, one
child a GPU, or one beside the stage's own process where the run has one GPU (lab.studies.peer_check).

    results = check_shared(rec, cases, ["0", "1"], check_here)   # what stage_correctness does
    python -m lab.studies.correctness_child RUN_DIR --part K --parts N --out FILE   # one child: K, K+N, ...
    python -m lab.studies.correctness_child RUN_DIR --peers --part K --parts N --out FILE   # the peers' cases
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


def balanced(items: list, costs: list[float], parts: int) -> list[list]:
    """`items` dealt to `parts` parts by their estimated `costs`, the costliest first, each to the part with
    the least cost so far (the lowest part on a tie; Graham's longest-processing-time rule: the slowest part
    at most 4/3 of the best split's); each part keeps its items in their given order."""
    if parts < 1:
        raise ValueError(f"parts={parts}: at least 1")
    if len(costs) != len(items):
        raise ValueError(f"{len(costs)} costs for {len(items)} items")
    load, owner = [0.0] * parts, [0] * len(items)
    for i in sorted(range(len(items)), key=lambda i: -costs[i]):
        owner[i] = min(range(parts), key=lambda k: load[k])
        load[owner[i]] += costs[i]
    return [[item for item, o in zip(items, owner) if o == k] for k in range(parts)]


def merge(parts: list[list]) -> list:
    """The items of shares(items, len(parts)) back in their order (each part's results in its items' order)."""
    longest = max((len(p) for p in parts), default=0)
    return [p[i] for i in range(longest) for p in parts if i < len(p)]


def child_command(run_dir, part: int, parts: int, out) -> list[str]:
    """One GPU's child (lab.studies.correctness_child): part `part` of `parts` of the run's grid, written to `out`."""
    return [sys.executable, "-m", "lab.studies.correctness_child", str(run_dir), "--part", str(part), "--parts",
            str(parts), "--out", str(out)]


class Children:
    """Child processes started side by side (start_children); wait() for their exit codes, in order."""

    def __init__(self, procs, readers):
        self.procs, self.readers = procs, readers

    def wait(self) -> list[int]:
        codes = [proc.wait() for proc in self.procs]
        for t in self.readers:
            t.join()
        return codes


def start_children(commands: list[list[str]], gpus: list, progress=print, tick=None, labels=None,
                   env: dict | None = None) -> Children:
    """Start commands[k] with CUDA_VISIBLE_DEVICES gpus[k] (None: this process's GPUs) and `env` added, all
    side by side, from the repository; pass their lines on (prefixed with labels[k], default "GPU <gpus[k]>")
    and their TICK lines to `tick`."""
    from lab.kernels.manifest import REPO

    labels = labels or [f"GPU {gpu}" for gpu in gpus]

    def environment(gpu) -> dict:
        return {**os.environ, **(env or {}), **({} if gpu is None else {"CUDA_VISIBLE_DEVICES": gpu})}

    procs = [subprocess.Popen(cmd, cwd=REPO, text=True, bufsize=1, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=environment(gpu)) for cmd, gpu in zip(commands, gpus)]

    def relay(proc, label) -> None:
        for line in proc.stdout:
            line = line.rstrip("\n")
            if line.startswith(TICK):
                if tick is not None:
                    tick(line[len(TICK):])
            elif line.strip():
                progress(f"  [{label}] {line.strip()}")

    readers = [threading.Thread(target=relay, args=(proc, label), daemon=True) for proc, label in zip(procs, labels)]
    for t in readers:
        t.start()
    return Children(procs, readers)


def run_children(commands: list[list[str]], gpus: list, progress=print, tick=None) -> list[int]:
    """start_children, then wait: the exit codes, in order."""
    return start_children(commands, gpus, progress, tick).wait()


class SharedCheck:
    """A grid's parts being checked by children (start_shared); collect() waits and returns the results."""

    def __init__(self, parts, children, outs, tmp, gpus, progress, what):
        self.parts, self.children, self.outs, self.tmp = parts, children, outs, tmp
        self.gpus, self.progress, self.what = gpus, progress, what

    def collect(self, check_here) -> list:
        """The children's results in run_grid's order (case-major); a part whose child exits non-zero, leaves
        no results or checked other cases than asked is checked here (`check_here(cases)`)."""
        from lab.measure import check as checks

        try:
            codes = self.children.wait()
            results: list = [None] * len(self.parts)
            for k, (code, out) in enumerate(zip(codes, self.outs)):
                got = json.loads(out.read_text()) if code == 0 and out.exists() else {}
                if got.get("cases") == [c.id for c in self.parts[k]]:  # the child checked the cases asked of it
                    results[k] = [checks.CaseResult(**r) for r in got["results"]]
        finally:
            self.tmp.cleanup()
        for k, part in enumerate(self.parts):
            if results[k] is None:
                where = "here" if self.gpus[k] is None else f"on GPU {self.gpus[k]}"
                self.progress(f"  the {self.what} part {where} exited with code {codes[k]} and left no results for "
                              f"its cases: its {len(part)} cases are checked here")
                results[k] = list(check_here(part))
        # each case's results (one a kernel) stay together: merge whole cases, then flatten
        per_case = [_by_case(part_results, len(part)) for part_results, part in zip(results, self.parts)]
        return [r for case in merge(per_case) for r in case]


def start_shared(rec, cases: list, gpus: list, progress=print, tick=None, command=child_command,
                 what: str = "grid", env: dict | None = None) -> SharedCheck:
    """Start one child a GPU of `gpus` (CUDA_VISIBLE_DEVICES entries; None: this process's), child k checking
    part k of shares(cases, len(gpus)) by `command(run_dir, k, parts, out)`, with `env` added to its
    environment; collect() for the results."""
    parts = shares(list(cases), len(gpus))
    tmp = tempfile.TemporaryDirectory(prefix="gpu-share-")
    outs = [Path(tmp.name) / f"part{k}.json" for k in range(len(gpus))]
    labels = [f"{what} here" if gpu is None else f"GPU {gpu}" if what == "grid" else f"{what}, GPU {gpu}"
              for gpu in gpus]
    children = start_children([command(rec.dir, k, len(gpus), outs[k]) for k in range(len(gpus))], gpus, progress,
                              tick, labels, env)
    return SharedCheck(parts, children, outs, tmp, gpus, progress, what)


def check_shared(rec, cases: list, gpus: list[str], check_here, progress=print, tick=None,
                 command=child_command) -> list:
    """Every case of `cases` checked by one child a GPU of `gpus` (CUDA_VISIBLE_DEVICES entries), as
    lab.measure.check.run_grid's CaseResults in run_grid's order (case-major). A child's lines are passed
    on (prefixed with its GPU) and its finished cases ticked; a part whose child exits non-zero or leaves no
    results is checked in this process (`check_here(cases)`: the stage's run_grid over the run's kernels)."""
    progress(f"  {len(cases)} cases over {len(gpus)} GPUs, one process a GPU")
    return start_shared(rec, cases, gpus, progress, tick, command).collect(check_here)


def _by_case(results: list, n_cases: int) -> list[list]:
    """A part's results (case-major, the same number a case) as one list a case."""
    if n_cases == 0:
        return []
    if len(results) % n_cases:
        raise ValueError(f"{len(results)} results for {n_cases} cases: not the same number a case")
    each = len(results) // n_cases
    return [results[i * each:(i + 1) * each] for i in range(n_cases)]
