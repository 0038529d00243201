"""data/INDEX.md (lab.report.data_index): every folder of data/explorations and data/checks has an
entry with its evidence present, every run folder kept in the tree is named with why, INDEX.md is
what data/index.toml generates, and each rule turns red when broken."""

import copy
import json
import subprocess
import tomllib

import pytest

from lab.kernels.manifest import REPO
from lab.report import committed, data_index


@pytest.fixture(scope="module")
def index():
    return data_index.load()


def test_the_index_holds_for_the_tree_and_is_current(index):
    assert data_index.problems(index) == []
    assert data_index.INDEX_MD.read_text() == data_index.render(index), "run `make docs`"


def test_every_evidence_folder_is_listed_once(index):
    listed = [e["folder"] for e in index["entry"]]
    on_disk = sorted(f"{kind}/{p.name}" for kind in ("explorations", "checks")
                     for p in (REPO / "data" / kind).iterdir() if p.is_dir())
    assert sorted(listed) == on_disk and len(set(listed)) == len(listed)
    md = data_index.INDEX_MD.read_text()
    assert all(f"({folder}/)" in md for folder in on_disk)


@pytest.mark.parametrize("breakage, expected", [
    (lambda ix: ix["entry"].pop(0), "no [[entry]] in data/index.toml"),
    (lambda ix: ix["entry"][1]["evidence"].append("no-such-file.txt"), "evidence no-such-file.txt is not in the folder"),
    (lambda ix: ix["entry"][2].update(steps=[999]), "steps [999] are not in kernels/variants/manifest.toml"),
    (lambda ix: ix["entry"][3].update(date="26-11-2026"), "is not YYYY-MM-DD"),
    (lambda ix: ix["entry"][4].update(topic="vibes"), "topic 'vibes'"),
    (lambda ix: ix["entry"][5].pop("verdict"), "lacks verdict"),
    (lambda ix: ix["entry"].append(dict(ix["entry"][6])), "listed more than once"),
    (lambda ix: ix["entry"].append({**ix["entry"][6], "folder": "checks/2099-01-01-nowhere"}), "no such folder"),
    (lambda ix: ix["run"].pop(0), "a run folder in the tree that no [[run]]"),
    (lambda ix: ix["run"].append({"path": "data/runs/nope", "role": "x"}), "[[run]] data/runs/nope: no such folder"),
    (lambda ix: ix["superseded"][0].update(tree="abc"), "is not a 40-digit git object id"),
    (lambda ix: ix["superseded"][1].pop("last"), "lacks last"),
])
def test_each_rule_turns_red_when_broken(index, breakage, expected):
    broken = copy.deepcopy(index)
    breakage(broken)
    found = data_index.problems(broken)
    assert any(expected in p for p in found), found


def test_a_superseded_entry_names_the_folder_git_keeps():
    """The entry --supersede writes for a committed run folder: its tree id is git's for that folder at
    HEAD (where the report's runs are committed), so `git archive <tree>` gives the folder back."""
    run = committed.default_run()
    path = f"data/runs/{run}"
    try:
        want = subprocess.run(["git", "-C", str(REPO), "rev-parse", f"HEAD:{path}"], check=True, capture_output=True,
                              text=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        pytest.skip("no git history with the report's run here")
    entry = tomllib.loads(data_index.superseded_entry(path))["superseded"][0]
    assert entry["tree"] == want and entry["run"] == run and entry["kind"] == "study"
    steps = len(json.loads((REPO / path / "params.json").read_text())["variants"])  # the file, not git's copy
    assert entry["gpu"] == next(r["gpu"] for r in data_index.load()["run"] if r["path"] == path) and entry["steps"] == steps
    assert not data_index.problems({**data_index.load(), "superseded": [entry]})
    with pytest.raises(ValueError, match="not in HEAD's tree"):
        data_index.superseded_entry("data/runs/20990101T000000Z-never")
