"""CPU tests: the notebooks are reviewable (outputs stripped, one typed `parameters` cell each),
papermill understands their parameters, and the report notebook runs on the committed run."""

from pathlib import Path

import pytest

# The notebook tooling is the study's, not every machine's (the lent GPU machines have none):
# without it these tests skip, with the reason, instead of failing the whole collection.
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("jupyter_client")

from lab import jupyter_kernel  # noqa: E402
from lab.kernels.shape import Shape  # noqa: E402
from lab.measure import records  # noqa: E402
from lab.pipeline import MEASURE, NOTEBOOKS_DIR, REPORT  # noqa: E402

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
EXPLORE = "06_explore.ipynb"  # for reading a run; not a pipeline stage
EXPLORE_RUN = "20261122T023222Z-793d6a3"


def test_the_numbered_notebooks_are_the_pipeline():
    assert [p.name for p in NOTEBOOKS] == [*MEASURE, REPORT, EXPLORE]


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
                        cwd=str(NOTEBOOKS_DIR), progress_bar=False, kernel_manager_class=jupyter_kernel.MANAGER)
    md = (tmp_path / "reports" / "OPTIMIZATION_REPORT.md").read_text()
    assert run_id in md
    assert (tmp_path / "reports" / "ablation.html").stat().st_size > 10_000
    nb = nbformat.read(out, as_version=4)
    shown = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert any("image/png" in o.get("data", {}) for o in shown), "the hero figure inline"
    assert any("vs parent [95% CI]" in o.get("data", {}).get("text/html", "") for o in shown), "the ladder table"


@pytest.mark.skipif(not (records.RUNS_DIR / EXPLORE_RUN).is_dir(), reason=f"run {EXPLORE_RUN} is not committed")
def test_explore_notebook_compares_two_steps_from_the_run_folder(tmp_path):
    import papermill as pm

    from lab.measure import stats
    from lab.report import explore

    out = tmp_path / EXPLORE
    params = {"run_id": EXPLORE_RUN, "shape": "4,16,512,64,causal", "step_a": "mma_sync", "step_b": "tma"}
    pm.execute_notebook(str(NOTEBOOKS_DIR / EXPLORE), str(out), kernel_name="python3", parameters=params,
                        cwd=str(NOTEBOOKS_DIR), progress_bar=False, kernel_manager_class=jupyter_kernel.MANAGER)
    nb = nbformat.read(out, as_version=4)
    html = "".join(o.get("data", {}).get("text/html", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    pngs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(pngs) == 1 and "tensor_pipe_active" in html
    data = explore.open_run(EXPLORE_RUN)
    sh = Shape.parse(params["shape"])
    c = stats.speedup_ci(data.lat("tma", sh, "hot"), data.lat("mma_sync", sh, "hot"), seed=0)
    df = explore.compare(data, sh, "mma_sync", "tma")
    assert (df.iloc[0]["speedup"], df.iloc[0]["ci_lo"], df.iloc[0]["ci_hi"]) == (c.ratio, c.lo, c.hi)
    with pytest.raises(ValueError, match="not recorded"):
        explore.compare(data, "3,3,333,64", "mma_sync", "tma")


def test_make_report_regenerates_the_committed_report(tmp_path):
    """`make report` without a GPU rebuilds the committed report from the committed run:
    the Markdown byte for byte (the HTML embeds figures whose pixels depend on fonts)."""
    from lab import report

    committed = Path(__file__).resolve().parent.parent / "reports" / "OPTIMIZATION_REPORT.md"
    run_id = next(line for line in committed.read_text().splitlines() if line.startswith("**Run ")).split()[1]
    rec = records.RunRecord.open(run_id)
    md = report.write(rec, tmp_path)
    assert Path(md).read_text() == committed.read_text()
