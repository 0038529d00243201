"""data/INDEX.md: what the repository keeps of its measurements and where the rest is.

Generated from data/index.toml (`python -m lab.report.data_index`, also run by `make docs`):

    [[entry]]       one folder of data/explorations or data/checks: its date, the ladder steps it
                    concerns, the question, the verdict and the files that hold the deciding numbers;
                    `pruned`, where its other raw files left the tree: the commit that last held them,
                    the folder's git tree id there, and how many files and bytes left
    [[run]]         one run folder kept in the tree (data/runs, tests/fixtures) and why it is kept
    [[superseded]]  a run folder that left the tree: its id, GPU, the commit that added it, the last
                    commit that held it and its git tree id there (the folder's content hash:
                    `git archive <tree> | tar -x -C <dir>` gives it back)

`python -m lab.report.data_index --supersede RUN_ID` writes a run's [[superseded]] entry from git
before its folder leaves the tree; `--prune FOLDER` takes a committed folder's raw files out of the
tree (all but its evidence, README, scripts and patches: `prunable`) and writes its entry's `pruned`;
`--check` lists what does not hold (tests/test_data_index.py): a folder without an entry or an entry
without its folder, evidence that is not there, a run folder in the tree that no [[run]] names, a
`pruned` whose tree git does not hold as said, a stale INDEX.md.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

from lab.cli import OneLineParser, refuse
from lab.kernels.manifest import REPO

INDEX_TOML = REPO / "data" / "index.toml"
INDEX_MD = REPO / "data" / "INDEX.md"
KINDS = ("explorations", "checks")  # the folders of data/ whose every sub-folder has an entry
RUN_ROOTS = ("data/runs", "data/tuning", "tests/fixtures/runs", "tests/fixtures/legacy")
ENTRY_FIELDS = ("folder", "date", "steps", "topic", "question", "verdict", "evidence")
TOPICS = ("kernel", "measurement", "records", "tooling")
SUPERSEDED_FIELDS = ("run", "kind", "gpu", "steps", "added", "last", "tree")
PRUNED_FIELDS = ("last", "tree", "files", "bytes")
# What a pruned folder keeps besides its evidence: what a reader reads first and what ran (scripts, patches)
KEPT_SUFFIXES = (".md", ".py", ".sh", ".patch", ".diff", ".toml", ".cu", ".cuh")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}$")
TREE = re.compile(r"[0-9a-f]{40}$")

RULE = """\
**What stays in the tree.** The runs the committed report is written from (`data/runs/`: its RUN
and BASE), the test fixtures (`tests/fixtures/runs/`, trimmed to what the tests read, and
`tests/fixtures/legacy/`, one folder of the run layout before issue 44 for the migration test), and
the explorations and checks below: their scripts, their outputs and the small run folders or
extracts their scripts read. A run folder holds each measured fact once (`docs/methodology.md`,
Records). When a new run becomes the report's, the run it replaces leaves `data/runs/` in the same
commit and its entry goes under *Superseded runs* (`python -m lab.report.data_index --supersede
RUN_ID`, before the folder is removed): git history keeps it, and its tree id finds it again,
`git archive <tree> | tar -x -C <dir>`. An exploration reads only what is committed in the tree:
what it needs of a superseded run is copied into its folder with the commit and tree id it came
from (`history.json`, `inputs/`). Scripts that ran on the GPU machine read what their own call
measured; what they printed is committed beside them. A folder whose work is done may be pruned
(`python -m lab.report.data_index --prune FOLDER`): it keeps its README, scripts, patches and
evidence, and its other raw files (samples, logs, profiler dumps) leave the tree; the entry's
`pruned` gives the commit that last held them and the folder's tree id there, which `git archive`
turns back into the whole folder."""


def load(path: Path = INDEX_TOML) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def _folders(kind: str) -> list[str]:
    root = REPO / "data" / kind
    return sorted(f"{kind}/{p.name}" for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def _run_folders() -> list[str]:
    out = []
    for root in RUN_ROOTS:
        base = REPO / root
        out += sorted(f"{root}/{p.name}" for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
    return out


def problems(index: dict | None = None) -> list[str]:
    """What does not hold between data/index.toml and the tree (empty: all of it holds)."""
    from lab.kernels import manifest

    index = index if index is not None else load()
    out: list[str] = []
    entries = index.get("entry", [])
    steps = {v.index for v in manifest.manifest()}
    listed = [e.get("folder") for e in entries]
    for folder in sorted({f for f in listed if listed.count(f) > 1}):
        out.append(f"{folder}: listed more than once")
    on_disk = [f for kind in KINDS for f in _folders(kind)]
    out += [f"data/{f}: no [[entry]] in data/index.toml" for f in on_disk if f not in listed]
    for e in entries:
        where = f"data/index.toml [[entry]] {e.get('folder')}"
        if missing := [k for k in ENTRY_FIELDS if k not in e]:
            out.append(f"{where}: lacks {', '.join(missing)}")
            continue
        if e["folder"] not in on_disk:
            out.append(f"{where}: no such folder under data/{'|'.join(KINDS)}")
            continue
        if not DATE.match(str(e["date"])):
            out.append(f"{where}: date {e['date']!r} is not YYYY-MM-DD")
        if e["topic"] not in TOPICS:
            out.append(f"{where}: topic {e['topic']!r} is not one of {', '.join(TOPICS)}")
        if unknown := [s for s in e["steps"] if s not in steps]:
            out.append(f"{where}: steps {unknown} are not in kernels/variants/manifest.toml")
        if not e["evidence"]:
            out.append(f"{where}: names no evidence")
        for ev in e["evidence"]:
            if not (REPO / "data" / e["folder"] / ev).exists():
                out.append(f"{where}: evidence {ev} is not in the folder")
        if not e["question"].strip() or not e["verdict"].strip():
            out.append(f"{where}: an empty question or verdict")
        if "pruned" in e:
            out += [f"{where}: pruned {p}" for p in _pruned_problems(e)]
    runs = {r.get("path") for r in index.get("run", [])}
    out += [f"{f}: a run folder in the tree that no [[run]] of data/index.toml names" for f in _run_folders()
            if f not in runs]
    out += [f"data/index.toml [[run]] {p}: no such folder" for p in sorted(runs - set(_run_folders()))]
    for s in index.get("superseded", []):
        where = f"data/index.toml [[superseded]] {s.get('run')}"
        if missing := [k for k in SUPERSEDED_FIELDS if k not in s]:
            out.append(f"{where}: lacks {', '.join(missing)}")
        elif not TREE.match(s["tree"]):
            out.append(f"{where}: tree {s['tree']!r} is not a 40-digit git object id")
    return out


def prunable(files: list[str], evidence: list[str]) -> list[str]:
    """Of a folder's files (paths inside it), those that may leave the tree: neither evidence (a file,
    or a folder and all under it) nor a README, script or patch (KEPT_SUFFIXES)."""
    kept = tuple(e.rstrip("/") + "/" for e in evidence)
    return sorted(f for f in files if f not in set(evidence) and not f.startswith(kept)
                  and not f.endswith(KEPT_SUFFIXES))


def _pruned_problems(e: dict) -> list[str]:
    p = e["pruned"]
    if missing := [k for k in PRUNED_FIELDS if k not in p]:
        return [f"lacks {', '.join(missing)}"]
    if not TREE.match(str(p["tree"])):
        return [f"tree {p['tree']!r} is not a 40-digit git object id"]
    if not _full_history():
        return []  # a shallow clone or no git: the ids' form is all that can be checked
    try:
        sizes = _tree_sizes(p["tree"])
        at_last = _git("rev-parse", f"{p['last']}:data/{e['folder']}")
    except subprocess.CalledProcessError:
        return [f"tree {p['tree']} or commit {p['last']} is not in this repository's history"]
    out = [] if at_last == p["tree"] else [f"tree {p['tree']} is not data/{e['folder']} at {p['last']} ({at_last})"]
    here = REPO / "data" / e["folder"]
    gone = [f for f in sizes if not (here / f).exists()]
    if (len(gone), sum(sizes[f] for f in gone)) != (p["files"], p["bytes"]):
        out.append(f"says {p['files']} files of {p['bytes']} bytes left the tree, but {len(gone)} of "
                   f"{sum(sizes[f] for f in gone)} bytes of its tree are not here")
    if kept := [f for f in gone if f not in prunable([f], e["evidence"])]:
        out.append(f"took out what a pruned folder keeps: {', '.join(kept[:3])}")
    return out


def _tree_sizes(tree: str) -> dict[str, int]:
    """Each file of a git tree (its path inside the tree) and its size in bytes."""
    return {line.split("\t", 1)[1]: int(line.split()[3]) for line in _git("ls-tree", "-r", "-l", tree).splitlines()}


def _full_history() -> bool:
    try:
        return _git("rev-parse", "--is-shallow-repository") == "false"
    except (subprocess.CalledProcessError, FileNotFoundError):
        return False


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(index: dict | None = None) -> str:
    """INDEX.md's text."""
    from lab.report.formats import md_table

    index = index if index is not None else load()
    L = ["# What the repository keeps of its measurements", "",
         "<!-- generated from data/index.toml by `python -m lab.report.data_index` (`make docs`); edits here are "
         "overwritten -->", "", RULE, ""]
    L += ["## Run folders in the tree", ""]
    L.append(md_table(["folder", "GPU", "why it is here"],
                      [[f"`{r['path']}`", _cell(r.get("gpu", "")), _cell(r["role"])] for r in index.get("run", [])],
                      compact=True))
    for kind, title in (("explorations", "Explorations"), ("checks", "Checks")):
        rows = [e for e in index.get("entry", []) if e["folder"].startswith(kind + "/")]
        L += ["", f"## {title} (`data/{kind}/`)", "",
              f"{len(rows)} folders, oldest first. Steps: the ladder's (docs/ladder.md); evidence: files in the "
              "folder.", ""]
        L.append(md_table(["date", "folder", "steps", "question", "verdict", "evidence"],
                          [[e["date"], f"[`{e['folder'].split('/', 1)[1]}`]({e['folder']}/)",
                            ", ".join(map(str, e["steps"])) or e["topic"], _cell(e["question"]), _cell(e["verdict"]),
                            ", ".join(f"`{x}`" for x in e["evidence"]) + _pruned_note(e)]
                           for e in sorted(rows, key=lambda e: (e["date"], e["folder"]))], compact=True))
    sup = index.get("superseded", [])
    L += ["", "## Superseded runs (in git history)", "",
          f"{len(sup)} run folders that left the tree, and the form in which runs now in the tree were first "
          "committed. `added`: the commit that added the folder; `last`: a commit that holds it as listed; `tree`: "
          "its git tree id there. `git archive <tree> | tar -x -C <dir>` writes the folder into <dir>; "
          "`python -m lab.studies.migrate <dir>` brings one of the layout before issue 44 to today's.", ""]
    L.append(md_table(["run", "kind", "GPU", "steps", "added", "last", "tree", "note"],
                      [[f"`{s['run']}`", s["kind"], _cell(s["gpu"]), s["steps"], f"`{s['added']}`", f"`{s['last']}`",
                        f"`{s['tree']}`", _cell(s.get("note", ""))] for s in sup], compact=True))
    return "\n".join(L) + "\n"


def _pruned_note(e: dict) -> str:
    if "pruned" not in e:
        return ""
    p = e["pruned"]
    return (f"; {p['files']} raw files ({p['bytes'] / 1e6:.1f} MB) in git history: `git archive {p['tree']} | "
            f"tar -x -C <dir>` (as at `{p['last']}`)")


def write(path: Path = INDEX_MD) -> bool:
    """Write INDEX.md; returns whether it changed."""
    text = render()
    if path.exists() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


# --- a run leaving the tree -------------------------------------------------------------------


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True).stdout.strip()


def superseded_entry(path: str, kind: str = "study", note: str = "") -> str:
    """The [[superseded]] entry of a committed run folder (a path from the repository's root), as TOML
    text: read from git at HEAD, so the folder must be committed as it should be found again."""
    try:
        tree = _git("rev-parse", f"HEAD:{path}")
    except subprocess.CalledProcessError:
        raise ValueError(f"{path}: not in HEAD's tree (commit the run folder before it leaves)") from None
    added = _git("log", "--diff-filter=A", "--format=%h", "--", path).split()[-1]
    env = json.loads(_git("show", f"HEAD:{path}/env.json")) if _has(f"HEAD:{path}/env.json") else {}
    params = json.loads(_git("show", f"HEAD:{path}/params.json")) if _has(f"HEAD:{path}/params.json") else {}
    fields = {"run": Path(path).name, "kind": kind, "gpu": env.get("gpu", ""),
              "steps": len(params.get("variants") or []), "added": added, "last": _git("rev-parse", "--short", "HEAD"),
              "tree": tree, "note": note or f"was {path}"}
    return "[[superseded]]\n" + "".join(f"{k} = {json.dumps(v, ensure_ascii=False)}\n" for k, v in fields.items())


def _has(spec: str) -> bool:
    try:
        _git("cat-file", "-e", spec)
        return True
    except subprocess.CalledProcessError:
        return False


# --- a folder's raw files leaving the tree ---------------------------------------------------------


def prune(folder: str) -> dict:
    """Take a committed folder's raw files out of the tree (`prunable`: all but its entry's evidence,
    README, scripts and patches), say so at the end of its README, and write its entry's `pruned`
    into data/index.toml; returns that field. `folder`: explorations/<name> or checks/<name>. A
    ValueError where the folder has no entry, was pruned, differs from HEAD or has nothing to take."""
    folder = folder.removeprefix("data/").rstrip("/")
    entry = next((e for e in load(INDEX_TOML).get("entry", []) if e.get("folder") == folder), None)
    if entry is None:
        raise ValueError(f"{folder}: no [[entry]] in data/index.toml")
    if "pruned" in entry:
        raise ValueError(f"{folder}: pruned already (at {entry['pruned'].get('last')})")
    path = f"data/{folder}"
    if _git("status", "--porcelain", "--", path):
        raise ValueError(f"{path}: differs from HEAD (commit it as it should be found again)")
    try:
        tree = _git("rev-parse", f"HEAD:{path}")
    except subprocess.CalledProcessError:
        raise ValueError(f"{path}: not in HEAD's tree") from None
    sizes = _tree_sizes(tree)
    gone = prunable(list(sizes), entry["evidence"])
    if not gone:
        raise ValueError(f"{path}: nothing to prune (only evidence, README, scripts and patches)")
    fields = {"last": _git("rev-parse", "--short=10", "HEAD"), "tree": tree, "files": len(gone),
              "bytes": sum(sizes[f] for f in gone)}
    here = REPO / path
    for f in gone:
        (here / f).unlink()
    for d in sorted((p for p in here.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        if not any(d.iterdir()):
            d.rmdir()
    readme = here / "README.md"
    if readme.exists():
        readme.write_text(readme.read_text().rstrip("\n") + "\n\n" + _pruned_readme_note(fields) + "\n")
    INDEX_TOML.write_text(_with_field(INDEX_TOML.read_text(), folder, "pruned = { " + ", ".join(
        f"{k} = {json.dumps(v)}" for k, v in fields.items()) + " }"))
    return fields


def _pruned_readme_note(p: dict) -> str:
    text = (f"Pruned at `{p['last']}` (`python -m lab.report.data_index --prune`): {p['files']} raw files "
            f"({p['bytes'] / 1e6:.1f} MB) that the evidence does not need left the tree. "
            f"`git archive {p['tree']} | tar -x -C <dir>` gives this folder back as it was.")
    return "## Raw files in git history\n\n" + textwrap.fill(text, 120, break_on_hyphens=False, break_long_words=False)


def _with_field(text: str, folder: str, line: str) -> str:
    """data/index.toml's text with `line` at the end of the [[entry]] of `folder`."""
    lines = text.split("\n")
    try:
        at = lines.index(f'folder = "{folder}"')
    except ValueError:
        raise ValueError(f"{folder}: no line folder = \"{folder}\" in data/index.toml") from None
    end = next((i for i in range(at + 1, len(lines)) if lines[i].startswith("[[")), len(lines))
    while end > at + 1 and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[:end] + [line] + lines[end:])


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m lab.report.data_index", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="list what does not hold; exit 1 if anything")
    ap.add_argument("--supersede", metavar="PATH", help="append the [[superseded]] entry of a committed run folder "
                                                        "(data/runs/<run_id>, or the bare run id) to data/index.toml")
    ap.add_argument("--prune", metavar="FOLDER", nargs="+", default=[],
                    help="take each committed folder's raw files out of the tree (explorations/<name> or "
                         "checks/<name>; all but its evidence, README, scripts and patches) and write its `pruned`")
    ap.add_argument("--prune-before", metavar="DATE", help="--prune every folder whose entry is dated before DATE "
                                                          "(YYYY-MM-DD) and not pruned yet")
    args = ap.parse_args(argv)
    if args.prune or args.prune_before:
        if args.prune_before and not DATE.match(args.prune_before):
            refuse(ap.prog, f"--prune-before {args.prune_before!r}: not YYYY-MM-DD")
        folders = args.prune + [e["folder"] for e in load().get("entry", []) if args.prune_before
                                and str(e["date"]) < args.prune_before and "pruned" not in e]
        for folder in folders:
            try:
                p = prune(folder)
            except ValueError as exc:
                print(f"skipped {exc}")
                continue
            print(f"pruned {folder}: {p['files']} files, {p['bytes'] / 1e6:.2f} MB (tree {p['tree']})")
        write()
        return 0
    if args.supersede:
        try:
            path = args.supersede.rstrip("/")
            entry = superseded_entry(path if "/" in path else f"data/runs/{path}")  # a bare run id: data/runs/
        except ValueError as exc:
            refuse(ap.prog, f"--supersede {exc}")
        with open(INDEX_TOML, "a") as f:
            f.write("\n" + entry)
        print(entry, end="")
        write()
        return 0
    if args.check:
        found = problems() + ([f"{INDEX_MD.relative_to(REPO)} is stale: run `make docs`"]
                              if not INDEX_MD.exists() or INDEX_MD.read_text() != render() else [])
        for p in found:
            print(p)
        return 1 if found else 0
    print(INDEX_MD if write() else f"{INDEX_MD}: unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
