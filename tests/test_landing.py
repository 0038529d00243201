"""lab/studies/landing: the shared landing job (land.sh) and its device call (poll.sh) refuse what they cannot land
with one line naming the constraint, before they touch a GPU, and nothing else on this machine runs them."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LANDING = REPO / "lab" / "studies" / "landing"


def _tree(tmp_path) -> Path:
    """A scratch tree that reads the repository's lab/ and kernels/ (the manifest) and holds nothing to lose: a job
    that went on by mistake would clear its data/runs, not the repository's."""
    tree = tmp_path / "tree"
    if not tree.exists():
        tree.mkdir()
        (tree / "lab").symlink_to(REPO / "lab")
        (tree / "kernels").symlink_to(REPO / "kernels")
    return tree


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ("STEP", "RESUME_RUN", "CHECKED", "RUN_ARGS")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # `python` is this one
    env.update({"LAB_TREE": str(_tree(tmp_path)), "LAB_LAND_OUT": str(tmp_path / "out"), **extra})
    return env


def _land(tmp_path, **extra):
    r = subprocess.run(["bash", str(LANDING / "land.sh")], env=_env(tmp_path, **extra), capture_output=True, text=True,
                       timeout=120)
    status = (tmp_path / "out" / "status").read_text()
    return r.returncode, status


@pytest.mark.parametrize("script", ["land.sh", "poll.sh"])
def test_the_scripts_parse(script):
    assert subprocess.run(["bash", "-n", str(LANDING / script)], capture_output=True).returncode == 0


def test_land_refuses_a_missing_step(tmp_path):
    rc, status = _land(tmp_path)
    assert rc == 2 and "STEP is not set" in status and status.rstrip().endswith("all done")
    assert (tmp_path / "out" / "done").exists() and not (tmp_path / "out" / "gpu.txt").exists()


def test_land_refuses_a_step_the_manifest_lacks(tmp_path):
    rc, status = _land(tmp_path, STEP="no_such_step")
    assert rc == 2 and "STEP=no_such_step is no variant of the manifest" in status and "unknown variant" in status
    assert not (tmp_path / "out" / "gpu.txt").exists()


def test_land_refuses_a_tree_without_the_commit_to_record(tmp_path):
    rc, status = _land(tmp_path, STEP="conditional_rescale")  # _tree has no .scratch/sha_run
    assert rc == 2 and ".scratch/sha_run is missing" in status and not (tmp_path / "out" / "gpu.txt").exists()


def _fake_gpu_commands(tmp_path) -> dict:
    """PATH with a `python` that logs the landing's GPU commands (its tests, the sanitizer, the run) instead of running
    them and passes everything else to this Python; the tree has the commit to record."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f"""#!/bin/bash
case "$*" in *pytest*|*sanitize*|*lab.pipeline*) echo "$*" >> {log}; exit 0;; esac
exec {sys.executable} "$@"
""")
    (bin_dir / "python").chmod(0o755)
    (_tree(tmp_path) / ".scratch").mkdir()
    (_tree(tmp_path) / ".scratch" / "sha_run").write_text("0" * 40)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.mark.parametrize("checked", ["", "data/checks/2026-12-04-x"])
def test_land_skips_the_checks_only_where_told_where_they_passed(tmp_path, checked):
    rc, status = _land(tmp_path, STEP="conditional_rescale", CHECKED=checked, **_fake_gpu_commands(tmp_path))
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert rc == 0 and status.rstrip().endswith("all done") and "lab.pipeline --no-report" in calls[-1]
    if checked:
        assert len(calls) == 1 and f"skipped: they passed on these kernel sources in {checked}" in status
    else:
        assert [c.split()[:2] for c in calls[:2]] == [["-m", "pytest"], ["-m", "lab"]] and "sanitize" in calls[1]
        assert "skipped" not in status and len(calls) == 3


def test_land_passes_the_run_its_flags(tmp_path):
    """RUN_ARGS reaches lab.pipeline as flags of their own (a run not at the defaults: the sustained mode at issue 46's
    shapes), and the status says so; without it the run is at the defaults."""
    rc, status = _land(tmp_path, STEP="conditional_rescale", CHECKED="x", RUN_ARGS="--sustained large,long,models",
                       **_fake_gpu_commands(tmp_path))
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert rc == 0 and calls[-1].split() == ["-m", "lab.pipeline", "--no-report", "--sustained", "large,long,models"]
    assert "run start sha " + "0" * 40 + " with --sustained large,long,models" in status


@pytest.mark.parametrize("step, sha, why", [(None, True, "STEP is not set"),
                                             ("conditional_rescale", False, ".scratch/sha_run is missing")])
def test_poll_refuses_before_it_copies_anything(tmp_path, step, sha, why):
    if sha:
        (tmp_path / ".scratch").mkdir()
        (tmp_path / ".scratch" / "sha_run").write_text("0" * 40)
    env = _env(tmp_path, OUT=str(tmp_path / "o"), **({"STEP": step} if step else {}))
    r = subprocess.run(["bash", str(LANDING / "poll.sh")], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and why in r.stderr and not (tmp_path / "o").exists()


def test_poll_will_not_start_a_landing_over_unless_asked(tmp_path):
    """A later call that finds no job on its machine (lost, or released while idle) stops before it copies
    anything: starting over would spend the GPU tests' and the finished stages' device time again."""
    (tmp_path / ".scratch").mkdir()
    (tmp_path / ".scratch" / "sha_run").write_text("0" * 40)
    job = tmp_path / "no_job_here"
    env = _env(tmp_path, OUT=str(tmp_path / "o"), STEP="conditional_rescale", LAB_TREE=str(job),
               LAB_LAND_OUT=str(tmp_path / "job_out"))
    r = subprocess.run(["bash", str(LANDING / "poll.sh")], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 3 and "FRESH=1" in r.stderr and ".scratch/resume_run" in r.stderr
    assert not job.exists() and not (tmp_path / "job_out").exists()


def _git(repo, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout


def test_aside_moves_out_what_the_landing_does_not_read_and_puts_it_back(tmp_path):
    repo = tmp_path / "repo"
    files = ["data/explorations/x/a.txt", "data/checks/y/b.txt", "data/runs/r1/c.txt", "data/runs/r2/d.txt",
             "data/index.toml", "kernels/k.cu"]
    for f in files:
        (repo / f).parent.mkdir(parents=True, exist_ok=True)
        (repo / f).write_text(f)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "x")
    (repo / ".scratch").mkdir()
    (repo / ".scratch" / "resume_run").write_text("r2\n")  # the run to resume travels
    aside = tmp_path / "aside"
    env = {**os.environ, "ASIDE": str(aside)}

    def run(arg):
        return subprocess.run(["bash", str(LANDING / "aside.sh"), arg], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=60)

    r = run("out")
    assert r.returncode == 0, r.stderr
    assert sorted(_git(repo, "ls-files", "--deleted").split()) == sorted(files[:3])
    assert (aside / "runs" / "r1" / "c.txt").exists() and (repo / "data/runs/r2/d.txt").exists()
    again = run("out")  # a second 'out' would bury the first's folders
    assert again.returncode == 2 and "run 'back' first" in again.stderr
    r = run("back")
    assert r.returncode == 0 and "no tracked file missing" in r.stdout
    assert _git(repo, "status", "--porcelain", "--untracked-files=no") == "" and not aside.exists()
    assert run("back").returncode == 2  # nothing aside
