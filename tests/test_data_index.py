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


# --- pruned folders: raw files in git history, README, scripts and evidence in the tree ------------------------


def test_a_pruned_folder_keeps_its_evidence_readme_scripts_and_patches():
    files = ["README.md", "notes.md", "call1/log.txt", "call1/ratios.txt", "sweep.py", "call1.sh", "x.patch",
             "after.diff", "samples.json", "call1/ncu.csv.gz", "run/params.toml"]
    assert data_index.prunable(files, ["call1/ratios.txt", "samples.json"]) == ["call1/log.txt", "call1/ncu.csv.gz"]
    assert data_index.prunable(files, ["call1", "samples.json"]) == []  # a folder named as evidence: all under it
    assert data_index.prunable(files + ["call10/x.json"], ["call1/"]) == ["call10/x.json", "samples.json"]
    assert data_index.prunable(["a.json"], []) == ["a.json"]
    assert data_index.prunable(["README.md"], []) == []


def test_the_pruned_field_goes_at_the_end_of_its_own_entry():
    text = ('[[entry]]\nfolder = "explorations/a"\nverdict = """\\\nx\n[y]"""\nevidence = ["a.txt"]\n\n'
            '[[entry]]\nfolder = "checks/b"\nevidence = ["b.txt"]\n')
    first = data_index._with_field(text, "explorations/a", "pruned = { files = 1 }")
    assert first == text.replace('evidence = ["a.txt"]\n', 'evidence = ["a.txt"]\npruned = { files = 1 }\n')
    last = data_index._with_field(text, "checks/b", "pruned = { files = 2 }")
    assert last == text + "pruned = { files = 2 }\n" or last == text.rstrip("\n") + "\npruned = { files = 2 }\n"
    assert tomllib.loads(first)["entry"][0]["pruned"] == {"files": 1} and "pruned" not in tomllib.loads(first)["entry"][1]
    with pytest.raises(ValueError, match="no line folder"):
        data_index._with_field(text, "checks/c", "pruned = {}")


def _git(cwd, *args):
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_prune_takes_the_raw_files_out_and_git_gives_the_folder_back(tmp_path, monkeypatch):
    """On a repository of its own: the folder's raw files leave, the README says where they went, the entry's
    `pruned` names the commit and tree id that hold them, and `git archive` of that tree gives every file back."""
    folder = tmp_path / "data" / "explorations" / "2026-01-01-x"
    (folder / "call1").mkdir(parents=True)
    content = {"README.md": "# x\n", "sweep.py": "print(1)\n", "call1/ratios.txt": "1.002x\n",
               "call1/sweep.json": '{"rows": [1, 2, 3]}\n', "call1/log.txt": "a log\n" * 10}
    for name, text in content.items():
        (folder / name).write_text(text)
    toml = tmp_path / "data" / "index.toml"
    toml.write_text('[[entry]]\nfolder = "explorations/2026-01-01-x"\ndate = "2026-01-01"\nevidence = '
                    '["call1/ratios.txt"]\n')
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    monkeypatch.setattr(data_index, "REPO", tmp_path)
    monkeypatch.setattr(data_index, "INDEX_TOML", toml)
    tree = _git(tmp_path, "rev-parse", "HEAD:data/explorations/2026-01-01-x")

    p = data_index.prune("data/explorations/2026-01-01-x/")
    gone = ["call1/log.txt", "call1/sweep.json"]
    assert p == {"last": _git(tmp_path, "rev-parse", "--short=10", "HEAD"), "tree": tree, "files": 2,
                 "bytes": sum(len(content[f]) for f in gone)}
    assert sorted(str(f.relative_to(folder)) for f in folder.rglob("*") if f.is_file()) == [
        "README.md", "call1/ratios.txt", "sweep.py"]
    assert f"git archive {tree}" in (folder / "README.md").read_text()
    entry = tomllib.loads(toml.read_text())["entry"][0]
    assert entry["pruned"] == p and data_index._pruned_problems(entry) == []

    back = tmp_path / "back"
    back.mkdir()
    archive = subprocess.run(["git", "-C", str(tmp_path), "archive", tree], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(back)], input=archive, check=True)
    assert {n: (back / n).read_text() for n in content} == content

    assert "says 3 files" in " ".join(data_index._pruned_problems({**entry, "pruned": {**p, "files": 3}}))
    (folder / "sweep.py").unlink()  # a script is kept: its leaving is not a prune's
    found = data_index._pruned_problems(entry)
    assert any("took out what a pruned folder keeps: sweep.py" in f for f in found), found
    with pytest.raises(ValueError, match="pruned already"):
        data_index.prune("explorations/2026-01-01-x")
    with pytest.raises(ValueError, match="no \\[\\[entry\\]\\]"):
        data_index.prune("explorations/2026-01-02-y")


def test_each_pruned_rule_turns_red_when_broken(index):
    pruned = [i for i, e in enumerate(index["entry"]) if "pruned" in e]
    if not pruned or not data_index._full_history():
        pytest.skip("no pruned folder, or no full git history here")
    i, j = pruned[0], pruned[-1]
    for breakage, expected in [
        (lambda ix: ix["entry"][i]["pruned"].update(tree="abc"), "is not a 40-digit git object id"),
        (lambda ix: ix["entry"][i]["pruned"].pop("bytes"), "lacks bytes"),
        (lambda ix: ix["entry"][i]["pruned"].update(files=ix["entry"][i]["pruned"]["files"] + 1), "files of"),
        (lambda ix: ix["entry"][i]["pruned"].update(tree=ix["entry"][j]["pruned"]["tree"]), "is not data/"),
        (lambda ix: ix["entry"][i]["pruned"].update(tree="0" * 40), "not in this repository's history"),
    ]:
        if expected == "is not data/" and i == j:
            continue
        broken = copy.deepcopy(index)
        breakage(broken)
        found = data_index.problems(broken)
        assert any(expected in p for p in found), (expected, found)
