"""Progress of a long stage (lab.progress): the position a stage reports, the ETA rule, the bar the
pipeline draws on a terminal (and not elsewhere), and the comparable run the ETA starts from."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from lab import progress


@pytest.mark.parametrize("elapsed, done, total, expected, eta", [
    (30.0, 3, 10, None, 70.0),      # this stage's rate: 10 s a unit, 7 units left
    (30.0, 3, 10, 200.0, 140.0),    # a comparable run took 200 s: 70 % of it is left
    (300.0, 9, 10, 200.0, 20.0),    # slower than the comparable run: still its share, 10 % of 200 s
    (5.0, 0, 10, None, None),       # nothing done yet, nothing to go by
    (5.0, 0, 10, 120.0, 120.0),     # ... except the comparable run
    (50.0, 10, 10, None, 0.0),      # done
    (50.0, 12, 10, 100.0, 0.0),     # more done than announced: never below 0
    (1.0, 0, 0, 100.0, None),       # a stage with no units
])
def test_eta(elapsed, done, total, expected, eta):
    got = progress.eta_s(elapsed, done, total, expected)
    assert got == pytest.approx(eta) if eta is not None else got is None


@pytest.mark.parametrize("seconds, text", [(None, "?"), (0, "0:00"), (59.6, "1:00"), (61, "1:01"), (3725, "1:02:05")])
def test_clock(seconds, text):
    assert progress.clock(seconds) == text


def test_a_counter_reports_each_unit_from_any_thread(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    count = progress.Counter("run-a", "build", 40, root=tmp_path)
    assert progress.read("run-a", tmp_path)["done"] == 0
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: count.tick(f"v{i}"), range(40)))
    pos = progress.read("run-a", tmp_path)
    assert (pos["stage"], pos["done"], pos["total"]) == ("build", 40, 40)
    assert [p.name for p in tmp_path.iterdir()] == ["run-a.json"], "no temporary file left behind"


def test_a_report_that_cannot_be_written_never_fails_the_stage(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    progress.report("run-a", "timing", 1, 2, root=blocker / "sub")  # a file where the folder should be
    assert progress.read("run-a", blocker / "sub") is None


def _bar(run_id, expected=None, enabled=True):
    from lab.pipeline import ProgressBar

    stream = io.StringIO()
    bar = ProgressBar(run_id, expected, stream=stream, enabled=enabled, interval_s=3600)
    return bar, stream


def test_the_bar_shows_counts_elapsed_and_the_eta_of_a_comparable_run(monkeypatch):
    bar, stream = _bar("run-b", {"timing": 100.0})
    with bar:
        progress.report("run-b", "timing", 3, 12, "replicate 1 of 3, shape 3 of 4: (4, 16, 4096, 64)")
        bar._draw()
        text = stream.getvalue()
        assert "timing" in text and "3/12" in text and "25%" in text
        assert "ETA 1:15 (from a comparable run)" in text, text  # 75 % of 100 s left
        assert "shape 3 of 4" in text
        progress.report("run-b", "profile", 1, 4, "(4, 16, 512, 64)")
        bar._draw()
        assert "profile" in stream.getvalue() and "at this stage's rate" in stream.getvalue()


def test_the_bar_ignores_a_position_from_before_it_started():
    progress.report("run-c", "build", 5, 5)
    bar, stream = _bar("run-c")
    with bar:
        bar._draw()
        assert bar.bar is None and stream.getvalue() == ""


def test_no_bar_where_the_output_is_not_a_terminal(capsys):
    """CI logs: nothing drawn, the notebook's lines pass through unchanged."""
    from lab.pipeline import ProgressBar

    stream = io.StringIO()  # not a terminal: isatty() is False
    with ProgressBar("run-d", stream=stream) as bar:
        progress.report("run-d", "timing", 1, 2)
        assert not bar.enabled
        bar.write("  [timing] replicate 1 of 3, shape 1 of 2: (4, 16, 512, 64)\n")
    assert stream.getvalue() == ""
    assert capsys.readouterr().out == "  [timing] replicate 1 of 3, shape 1 of 2: (4, 16, 512, 64)\n"


def _run(root, run_id, gpu, params=None, state="complete", stages=None):
    from lab.measure import records
    from lab.studies.params import RunParams

    rec = records.RunRecord(run_id=run_id, root=root)
    rec.write_json("env.json", {"gpu": gpu})
    rec.write_json("params.json", (params or RunParams.from_text(shapes="canonical")).to_json())
    rec.write_json("stages.json", stages if stages is not None else {"build_s": 40.0, "timing_s": 400.0,
                                                                      "parts": {"timing": {"ceilings_s": 3.0}}})
    rec.finish(state) if state != "running" else None
    return rec


def test_the_comparable_run_has_the_same_gpu_and_parameters_and_is_complete(tmp_path):
    from lab.studies import stages
    from lab.studies.params import RunParams

    _run(tmp_path, "20260101T000000Z-a", "H100", stages={"build_s": 10.0, "timing_s": 300.0})
    _run(tmp_path, "20260102T000000Z-b", "H100")  # the latest that qualifies
    _run(tmp_path, "20260103T000000Z-c", "H200")  # another GPU
    _run(tmp_path, "20260104T000000Z-d", "H100", params=RunParams.from_text(shapes="large"))  # other parameters
    _run(tmp_path, "20260105T000000Z-e", "H100", state="incomplete")  # stopped
    now = _run(tmp_path, "20260106T000000Z-f", "H100", state="running", stages={})
    _run(tmp_path, "20260107T000000Z-g", "H100")  # after this run
    assert stages.comparable_stage_seconds(now) == ("20260102T000000Z-b", {"build": 40.0, "timing": 400.0})
    alone = _run(tmp_path, "20260108T000000Z-h", "A100", state="running", stages={})
    assert stages.comparable_stage_seconds(alone) == (None, {})


def test_the_stage_line_names_the_comparable_run():
    from lab.pipeline import expected_line

    got = expected_line("03_timing.ipynb", ("R", {"timing": 401.4, "factorial": 53.0, "build": 40.0}))
    assert got == " (timing took 401 s, factorial took 53 s in run R, same GPU and parameters)"
    assert expected_line("04_profile.ipynb", ("R", {"timing": 401.4})) == ""
    assert expected_line("01_build.ipynb", (None, {})) == ""


def test_a_replicate_reports_its_position_in_one_numbering(tmp_path):
    """The replicate's own lines and its position count replicates from 1, 'i of R', as the parent's do."""
    from lab.studies import replicate_child

    lines = []
    rec = _plan_run(tmp_path)
    replicate_child.measure_replicate(rec.dir, "timing", 1, measure=replicate_child.fake_measure,
                                 load=lambda builds: {n: n for n in builds}, seed_inputs=lambda seed: None,
                                 clocks=False, resolve_peers=replicate_child._fake_peers, progress=lines.append)
    assert lines[0].startswith("  [timing] replicate 2 of 3, shape 1 of 2: ")
    pos = progress.read(rec.run_id)
    assert (pos["stage"], pos["done"], pos["total"]) == ("timing", 4, 6), pos  # replicates 1 and 2 of 3, 2 shapes each


def _plan_run(tmp_path):
    from lab.measure import records
    from lab.studies import replicates
    from lab.studies.shapes import HEADLINE
    from lab.measure.timing import StopRule
    from lab.kernels.shape import Shape

    rec = records.RunRecord(run_id="20260109T000000Z-p", root=tmp_path)
    jobs = [replicates.Job(shape=shape, impls=["wmma"], peers=False, modes=["hot"], aa=None, seed=0)
            for shape in (HEADLINE, Shape.parse("4,16,512,64"))]
    rule = StopRule(rel_ci=0.005, cap_s=1.0, min_samples=10)
    replicates.write_plan(rec, "timing", jobs, {"wmma": {}}, [], rule, 3, 0)
    return rec


def test_progress_files_stay_out_of_the_tree_in_tests():
    import os

    assert os.environ.get(progress.ENV) and progress.PROGRESS_DIR.as_posix() not in os.environ[progress.ENV]
    assert progress.position_file("x").parent == Path(os.environ[progress.ENV])
