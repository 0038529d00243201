"""Work a stage hands to a background process at a lower priority, on the CPU, beside GPU work it must not
slow: the report's kept statistics during the profile (lab.studies.ahead), the factorial's builds during the
decode set (lab.studies.factorial.start_prebuild). Each such module's command line is `RUN [--nice N]`; the
stage waits for the process where it needs the work done, and does the work itself where the process
failed (a background process only moves work earlier, never decides anything).

    proc = background.start("lab.studies.ahead", rec, nice=10)   # None where it could not start
    python -m lab.studies.ahead RUN_ID --nice 10
"""

from __future__ import annotations

import os
import sys


def start(module: str, rec, nice: int, env: dict | None = None, popen=None):
    """`python -m module RUN_DIR --nice nice` from the repository with `env` added to this process's
    environment, its output discarded; the process, or None where it could not start."""
    import subprocess

    from lab.kernels.manifest import REPO

    try:
        return (popen or subprocess.Popen)([sys.executable, "-m", module, str(rec.dir), "--nice", str(nice)], cwd=REPO,
                                           env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL)
    except OSError:
        return None


def main(module: str, description: str, work, argv: list[str] | None = None) -> int:
    """The command line of a background module: RUN (a run id or a run folder's path) and --nice; prints
    what `work(rec)` returns."""
    from lab.cli import OneLineParser
    from lab.measure import records

    ap = OneLineParser(prog=f"python -m {module}", description=description)
    ap.add_argument("run_id", help="a run id under data/runs, or a run folder's path")
    ap.add_argument("--nice", type=int, default=0, help="lower this process's priority by so much (os.nice)")
    args = ap.parse_args(argv)
    if args.nice:
        os.nice(args.nice)
    try:
        rec = records.RunRecord.open(args.run_id)
    except FileNotFoundError as exc:
        ap.error(str(exc))
    print(work(rec), flush=True)
    return 0
