"""The committed report: which run, and which run it is replicated against, reports/OPTIMIZATION_REPORT.md
was written from. Its header line says both (`lab.report.context.Context.label`):

    **Run <run_id> · <GPU> · <date> · state: <state> · replicated against <base_id> · <modes> rows from <run_id>**

(the last parts where the report has them, the companions' one each: a companion is a run of some of the targets'
modes alone, hot or sustained, at more rounds, turns or replicates, on the run's GPU model or its base's, whose rows
issue 46's targets are judged on as well; <modes> is "hot", "sustained" or "hot and sustained").

This is the one home of the default run. Every command that writes the report or the generated parts of
README.md and docs/, or reads a run for a notebook, and is not told a run by name, uses it: `make ablation`
without a GPU, a bare `make report`, `make docs`, the report and explore notebooks. So a clean clone
stays clean, and a run other than the committed one is written only when asked for by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lab.kernels.manifest import REPO

REPORT = REPO / "reports" / "OPTIMIZATION_REPORT.md"
HEADER = re.compile(r"^\*\*Run (?P<run>\S+) · .*? · state: \S+(?: · replicated against (?P<base>\S+))?"
                    r"(?P<companions>(?: · (?:hot|sustained|hot and sustained) rows from \S+)*)\*\*$", re.M)
COMPANION = re.compile(r" rows from (\S+)")


@dataclass(frozen=True)
class Committed:
    run: str
    base: str | None
    companions: tuple[str, ...] = ()


def committed(report: Path | None = None) -> Committed | None:
    """The run and base the report at `report` (default: REPORT) names in its header, or None without a
    report or header."""
    report = Path(report or REPORT)
    if not report.exists():
        return None
    m = HEADER.search(report.read_text(encoding="utf-8"))
    return Committed(m["run"], m["base"], tuple(COMPANION.findall(m["companions"]))) if m else None


def is_committed_reports_dir(reports_dir) -> bool:
    """Whether `reports_dir` is the repository's reports/ (where the committed report lives)."""
    return Path(reports_dir).resolve() == REPORT.parent.resolve()


def default_run(root: Path | None = None) -> str | None:
    """The run a command reports on when told none: the committed report's run where it is under `root`,
    else the latest complete run, else the latest run of any state."""
    from lab.measure import records

    c = committed()
    if c is not None and c.run in records.list_runs(root):
        return c.run
    return records.latest_run(root) or records.latest_run(root, complete_only=False)


def default_base(data) -> str | None:
    """The run a report of `data` (a RunData) is replicated against when told none: the committed
    report's base for the committed report's run, else the latest complete run beside it on another
    GPU model (lab.report.replication.other_gpu_run), else None."""
    from lab.measure import records
    from lab.report import replication

    c = committed()
    if c is not None and c.run == data.run_id and c.base in records.list_runs(data.rec.dir.parent):
        return c.base
    return replication.other_gpu_run(data)


def default_companions(data) -> list[str]:
    """The companions a report of `data` (a RunData) takes when told none: the committed report's, for the committed
    report's run, those beside the run; else none (a companion is only ever named)."""
    from lab.measure import records

    c = committed()
    if c is None or c.run != data.run_id:
        return []
    beside = set(records.list_runs(data.rec.dir.parent))
    return [r for r in c.companions if r in beside]


def report_runs(data, base=None, companions=None) -> tuple:
    """The base and companions (RunData) a report of `data` (a RunData) takes: those given (RunRecords or RunData),
    else default_base's and default_companions'."""
    from lab.measure import records
    from lab.report.load import run_data

    if base is None and (other := default_base(data)):
        base = records.RunRecord.open(other, data.rec.dir.parent)
    if companions is None:
        companions = [records.RunRecord.open(r, data.rec.dir.parent) for r in default_companions(data)]
    return (run_data(base) if base is not None else None), [run_data(c) for c in companions]
