"""Where the tests' recorded runs are: tests/fixtures/runs/, trimmed to what the tests read (their
ncu/ CSVs and executed notebooks are left out; data/INDEX.md lists where the whole runs are in git
history). The report's own runs stay under data/runs/."""

from pathlib import Path

FIXTURE_RUNS = Path(__file__).resolve().parent / "fixtures" / "runs"
