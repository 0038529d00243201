"""Where a run's long stage is, for a progress bar with elapsed time and an ETA.

A stage reports its position with `report(run_id, stage, done, total, what)` (or a `Counter`): one
small JSON file, build/progress/<run_id>.json, replaced whole at each step. Nothing is printed, so the
executed notebooks and CI logs stay as they were. The pipeline (`make ablation`), on a terminal only,
reads the file and draws the bar (lab.pipeline.ProgressBar); the replicates, which are processes of
their own, report the same way.

The ETA (`eta_s`) comes from the same stage of the latest complete run on the same GPU with the same
parameters where there is one (its stages.json), scaled by the share of the work left; else from this
stage's own rate so far.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

PROGRESS_DIR = Path(__file__).resolve().parent.parent / "build" / "progress"
ENV = "LAB_PROGRESS_DIR"  # where else to keep the files (the tests keep theirs out of the tree)


def position_file(run_id: str, root: Path | None = None) -> Path:
    return Path(root or os.environ.get(ENV) or PROGRESS_DIR) / f"{run_id}.json"


def report(run_id: str, stage: str, done: int, total: int, what: str = "", root: Path | None = None) -> None:
    """Record that `stage` of run `run_id` has done `done` of `total` units (`what`: the unit now
    under way, e.g. "replicate 2 of 3, shape 4 of 28"). Never raises: progress is never worth a run."""
    path = position_file(run_id, root)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        tmp.write_text(json.dumps({"stage": stage, "done": int(done), "total": int(total), "what": what,
                                   "at": time.time()}))
        tmp.replace(path)
    except OSError:
        pass


def read(run_id: str, root: Path | None = None) -> dict | None:
    """The last position reported for the run, or None."""
    try:
        return json.loads(position_file(run_id, root).read_text())
    except (OSError, ValueError):
        return None


class Counter:
    """Counts finished units of one stage (from any thread) and reports each: `tick(what)`."""

    def __init__(self, run_id: str, stage: str, total: int, root: Path | None = None):
        self.run_id, self.stage, self.total, self.root = run_id, stage, total, root
        self.done, self._lock = 0, threading.Lock()
        report(run_id, stage, 0, total, "", root)

    def tick(self, what: str = "") -> None:
        with self._lock:
            self.done += 1
            report(self.run_id, self.stage, self.done, self.total, what, self.root)


def eta_s(elapsed_s: float, done: int, total: int, expected_s: float | None = None) -> float | None:
    """Seconds left in a stage that has done `done` of `total` units in `elapsed_s`. With `expected_s`
    (what the same stage took in a comparable run): that time's share for the units left, and never
    less than 0. Without it: this stage's own rate so far; None before the first unit is done."""
    if total <= 0:
        return None
    left = max(total - done, 0) / total
    if expected_s is not None:
        return max(expected_s * left, 0.0)
    if done <= 0:
        return None
    return elapsed_s / done * max(total - done, 0)


def clock(seconds: float | None) -> str:
    """'1:02:03', '4:05' or '?' (for no estimate)."""
    if seconds is None:
        return "?"
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
