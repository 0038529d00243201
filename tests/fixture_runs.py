"""Where the tests' recorded runs are: tests/fixtures/runs/, trimmed to what the tests read (their
ncu/ CSVs and executed notebooks are left out; data/INDEX.md lists where the whole runs are in git
history). The report's own runs stay under data/runs/; replicate_gpu_uuids reads one's GPUs."""

import json
from pathlib import Path

FIXTURE_RUNS = Path(__file__).resolve().parent / "fixtures" / "runs"


def replicate_gpu_uuids(run_id: str) -> set:
    """The GPU UUIDs a run's timing replicates name in its replicates.json (read here, not through lab.report)."""
    from lab.measure import records

    log = json.loads((records.RunRecord.open(run_id).dir / "replicates.json").read_text())
    return {r["gpu"]["gpu_uuid"] for r in log["timing"]["runs"] if r.get("gpu")}
