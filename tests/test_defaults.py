"""What a command does when told no run: the committed report's run and base, from one home
(lab.report.committed), so that a clean clone stays clean; and without a GPU, `make ablation` refuses
by name every parameter that only a new run could use."""

from __future__ import annotations

import argparse
import shutil

import pytest

from lab.report import committed
from tests.fixture_runs import FIXTURE_RUNS, replicate_gpu_uuids

HEADER = "**Run {run} · NVIDIA H100 80GB HBM3 · 2026-11-26T12:37:35+00:00 · state: complete{tail}**"


def _report(tmp_path, header: str):
    p = tmp_path / "OPTIMIZATION_REPORT.md"
    p.write_text(f"# FlashAttention forward kernels\n\n{header}\n\nbody **Run elsewhere · x · y · state: z**\n")
    return p


def test_the_header_names_the_run_and_the_base(tmp_path):
    with_base = _report(tmp_path, HEADER.format(run="A-1", tail=" · replicated against B-2"))
    assert committed.committed(with_base) == committed.Committed("A-1", "B-2")
    no_base = _report(tmp_path, HEADER.format(run="A-1", tail=""))
    assert committed.committed(no_base) == committed.Committed("A-1", None)
    companion = _report(tmp_path, HEADER.format(run="A-1", tail=" · replicated against B-2 · sustained rows from C-3"))
    assert committed.committed(companion) == committed.Committed("A-1", "B-2", ("C-3",))
    for modes in ("hot", "hot and sustained"):
        alone = _report(tmp_path, HEADER.format(run="A-1", tail=f" · {modes} rows from C-3"))
        assert committed.committed(alone) == committed.Committed("A-1", None, ("C-3",))
    two = _report(tmp_path, HEADER.format(run="A-1", tail=" · replicated against B-2 · sustained rows from C-3 · hot "
                                                          "rows from D-4"))
    assert committed.committed(two) == committed.Committed("A-1", "B-2", ("C-3", "D-4"))
    assert committed.committed(_report(tmp_path, HEADER.format(run="A-1", tail=" · replicated against B-2"))
                               ).companions == ()
    assert committed.committed(_report(tmp_path, "no header here")) is None
    assert committed.committed(tmp_path / "absent.md") is None


def test_the_committed_report_names_its_run_and_base():
    c = committed.committed()
    assert c is not None and c.base and c.run != c.base
    from lab.measure import records

    assert {c.run, c.base} <= set(records.list_runs()), "both are kept in data/runs"


def test_a_reports_label_reads_back_as_its_run_and_base(tmp_path):
    """The label the report writes (Context.label) is what committed() parses: the two stay in step."""
    from lab.report.context import Context
    from lab.report.load import RunData
    from lab.measure import records

    run_id = sorted(p.name for p in FIXTURE_RUNS.iterdir())[0]
    data = RunData(records.RunRecord.open(run_id, FIXTURE_RUNS))
    ctx = Context(data=data, figdir=tmp_path, base=data)
    assert committed.committed(_report(tmp_path, f"**{ctx.label}**")) == committed.Committed(run_id, run_id)
    ctx.base = None
    assert committed.committed(_report(tmp_path, f"**{ctx.label}**")) == committed.Committed(run_id, None)
    ctx.companions = [data, data]
    assert committed.committed(_report(tmp_path, f"**{ctx.label}**")) == committed.Committed(run_id, None,
                                                                                             (run_id, run_id))


def _runs(tmp_path, *ids):
    root = tmp_path / "runs"
    for run_id in ids:
        shutil.copytree(FIXTURE_RUNS / run_id, root / run_id)
    return root


def test_the_default_run_is_the_committed_one_where_it_is_kept(tmp_path, monkeypatch):
    fixtures = sorted(p.name for p in FIXTURE_RUNS.iterdir())
    old, new = fixtures[0], fixtures[-1]  # `new` is the latest by its id
    root = _runs(tmp_path, old, new)
    report = _report(tmp_path, HEADER.format(run=old, tail=""))
    monkeypatch.setattr(committed, "REPORT", report)
    assert committed.default_run(root) == old, "the committed run, although a later one is there"
    report.write_text(HEADER.format(run="gone-from-the-tree", tail=""))
    assert committed.default_run(root) == new, "a committed run not kept: the latest complete run"


def test_the_default_base_is_the_committed_one_for_the_committed_run_only(tmp_path, monkeypatch):
    from lab.measure import records
    from lab.report import replication
    from lab.report.load import RunData

    fixtures = sorted(p.name for p in FIXTURE_RUNS.iterdir())
    a, b = fixtures[0], fixtures[1]
    root = _runs(tmp_path, a, b)
    report = _report(tmp_path, HEADER.format(run=a, tail=f" · replicated against {b}"))
    monkeypatch.setattr(committed, "REPORT", report)
    monkeypatch.setattr(replication, "other_gpu_run", lambda data: "the-other-gpu-run")
    assert committed.default_base(RunData(records.RunRecord.open(a, root))) == b
    assert committed.default_base(RunData(records.RunRecord.open(b, root))) == "the-other-gpu-run"
    report.write_text(HEADER.format(run=a, tail=" · replicated against not-kept"))
    assert committed.default_base(RunData(records.RunRecord.open(a, root))) == "the-other-gpu-run"


@pytest.mark.parametrize("argv, named", [
    (["--variants", "padded"], "--variants"),
    (["--variants", "padded", "--shapes", "large"], "--variants, --shapes"),
    (["--replicates", "1"], "--replicates"),
    (["--no-report"], "--no-report"),
    (["--stop-after", "build"], "--stop-after"),
])
def test_without_a_gpu_a_new_runs_parameter_is_refused_by_name(argv, named, capsys, monkeypatch):
    from lab import pipeline

    monkeypatch.setattr(pipeline, "execute", lambda *a, **k: pytest.fail("a notebook ran"))
    monkeypatch.setitem(__import__("sys").modules, "torch", argparse.Namespace(
        cuda=argparse.Namespace(is_available=lambda: False)))
    assert pipeline.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{named} cannot be used" in err and "no CUDA GPU" in err, err


def test_without_a_gpu_and_without_parameters_the_committed_report_is_rebuilt(capsys, monkeypatch, tmp_path):
    from lab import pipeline

    ran = []
    monkeypatch.setattr(pipeline, "execute", lambda name, out, params: ran.append((name, params)) or 0.0)
    monkeypatch.setitem(__import__("sys").modules, "torch", argparse.Namespace(
        cuda=argparse.Namespace(is_available=lambda: False)))
    assert pipeline.main(["--reports-dir", str(tmp_path)]) == 0
    assert ran == [(pipeline.REPORT, {"run_id": committed.committed().run, "reports_dir": str(tmp_path)})]


def test_the_committed_reports_label_says_how_many_gpus_ran_it():
    """Issue 49: of the runs in the tree (the committed report's two among them), one ran its replicates on several
    GPUs at once (GPUS=N in its params.json, as many GPU UUIDs in its replicates.json); a run of one GPU at a time says
    so, plainly where one GPU ran it all, and as resumed where a lost machine left its replicates on two
    (lab.studies.resume); each label still reads back, and the report carries its run's."""
    import json

    from lab.measure import records
    from lab.report.context import Context
    from lab.report.load import RunData

    c = committed.committed()
    runs = sorted({c.run, c.base, *records.list_runs()})
    uuids = {r: len(replicate_gpu_uuids(r)) for r in runs}
    at_once = {r: json.loads((records.RunRecord.open(r).dir / "params.json").read_text()).get("gpus") for r in runs}
    model = {r: json.loads((records.RunRecord.open(r).dir / "env.json").read_text())["gpu"] for r in runs}
    assert any(uuids[r] >= 2 and at_once[r] not in (None, "1") for r in runs)  # the N-GPU run is one of the two
    for r in runs:
        label = Context(data=RunData(records.RunRecord.open(r)), figdir=None, base=None).gpus
        if uuids[r] < 2:
            assert label == model[r]
        elif at_once[r] == "1":
            assert label == f"{model[r]}, resumed on another ({uuids[r]} GPUs ran its replicates one after another)"
        else:
            assert label == f"{uuids[r]} × {model[r]}"
    data = {r: RunData(records.RunRecord.open(r)) for r in (c.run, c.base)}
    companions = [RunData(records.RunRecord.open(r)) for r in c.companions]
    assert f"**{Context(data=data[c.run], figdir=None, base=data[c.base], companions=companions).label}**" in \
        committed.REPORT.read_text()
    assert committed.committed() == c  # the label reads back


def test_a_bare_report_of_the_committed_run_keeps_its_companion(tmp_path, monkeypatch):
    """The companions the committed report's header names are kept in data/runs, and a report of its run told none
    takes them (lab.report.committed.default_companions), so that `make report` rewrites the committed report as it
    is; a report of another run takes none. The rule is checked on a header that names one (the committed run's base
    standing in as its companion) whether or not today's report has any."""
    from lab.measure import records
    from lab.report.load import RunData

    c = committed.committed()
    assert set(c.companions) <= set(records.list_runs()), "the companions are kept in data/runs"
    run, base = (RunData(records.RunRecord.open(r)) for r in (c.run, c.base))
    assert committed.default_companions(run) == list(c.companions)
    header = f"**Run {c.run} · GPU · date · state: complete · replicated against {c.base} · hot rows from {c.base}**\n"
    (tmp_path / "report.md").write_text(header, encoding="utf-8")
    monkeypatch.setattr(committed, "REPORT", tmp_path / "report.md")
    assert committed.default_companions(run) == [c.base]
    assert committed.default_companions(base) == []
    (tmp_path / "report.md").write_text(header.replace(c.base + "**", "20990101T000000Z-gone**"), encoding="utf-8")
    assert committed.default_companions(run) == []  # a companion not beside the run is left out


def test_report_refuses_a_companion_that_cannot_stand_in_in_one_line(tmp_path, capsys):
    """`--companion` naming a run on a third GPU model, or the base itself: exit 2 and one line saying why, nothing
    written."""
    import json

    from lab.report import render

    c = committed.committed()
    root = tmp_path / "runs"
    from lab.measure import records

    for r in (c.run, c.base):
        shutil.copytree(records.RunRecord.open(r).dir, root / r)
    third = root / "20990101T000000Z-a100aaa"
    shutil.copytree(records.RunRecord.open(c.run).dir, third)
    env = json.loads((third / "env.json").read_text())
    (third / "env.json").write_text(json.dumps({**env, "gpu": "NVIDIA A100-SXM4-80GB"}))
    gpus = [json.loads((root / r / "env.json").read_text())["gpu"] for r in (c.run, c.base)]
    for companion, needle in ((third.name, f"{third.name} ran on NVIDIA A100-SXM4-80GB, the run on {gpus[0]}" + (
            f" and its base on {gpus[1]}: a companion must be the run's GPU model or its base's" if gpus[1] != gpus[0]
            else ": a companion must be the same GPU model")), (c.base, f"{c.base} is the report's base itself")):
        with pytest.raises(SystemExit) as exc:
            render.main([c.run, "--runs-root", str(root), "--base", c.base, "--companion", companion,
                         "--reports-dir", str(tmp_path / "reports")])
        assert exc.value.code == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "--companion:" in err and needle in err, err
        assert not (tmp_path / "reports" / "OPTIMIZATION_REPORT.md").exists()
