"""CPU tests: the notebooks are reviewable (outputs stripped, one typed `parameters` cell each),
papermill understands their parameters, and the report notebook runs on the committed run."""

from pathlib import Path

import nbformat
import pytest

from lab import records
from lab.pipeline import MEASURE, NOTEBOOKS_DIR, REPORT

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))


def test_the_numbered_notebooks_are_the_pipeline():
    assert [p.name for p in NOTEBOOKS] == [*MEASURE, REPORT]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stripped_and_parameterized(path):
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged `parameters`"
    assert "run_id: str" in tagged[0].source, "typed, commented defaults"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, "outputs stripped for review"


def test_papermill_reads_the_parameters():
    import papermill as pm

    params = pm.inspect_notebook(str(NOTEBOOKS_DIR / "00_environment.ipynb"))
    assert {"run_id", "variants", "shapes", "modes", "cap_s", "rel_ci", "profile", "check"} <= set(params)
    assert params["cap_s"]["inferred_type_name"] == "float"


def test_report_notebook_runs_on_the_committed_run(tmp_path):
    import papermill as pm

    run_id = records.latest_run()
    assert run_id, "a recorded run is committed under data/runs"
    out = tmp_path / "05_report.ipynb"
    pm.execute_notebook(str(NOTEBOOKS_DIR / REPORT), str(out), kernel_name="python3",
                        parameters={"run_id": run_id, "reports_dir": str(tmp_path / "reports")},
                        cwd=str(NOTEBOOKS_DIR), progress_bar=False)
    md = (tmp_path / "reports" / "OPTIMIZATION_REPORT.md").read_text()
    assert run_id in md
    assert (tmp_path / "reports" / "ablation.html").stat().st_size > 10_000


def test_make_report_regenerates_the_committed_report(tmp_path):
    """`make report` without a GPU rebuilds the committed report from the committed run:
    the Markdown byte for byte (the HTML embeds figures whose pixels depend on fonts)."""
    from lab import report

    committed = Path(__file__).resolve().parent.parent / "reports" / "OPTIMIZATION_REPORT.md"
    run_id = next(line for line in committed.read_text().splitlines() if line.startswith("**Run ")).split()[1]
    rec = records.RunRecord.open(run_id)
    md = report.write(rec, tmp_path)
    assert Path(md).read_text() == committed.read_text()
