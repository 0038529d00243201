"""The package's imports go one way, and never in a circle.

Layers (lab/__init__.py describes them): 0 `lab.cli` and `lab.progress` (the command lines' conventions, a stage's progress), 1 `lab.kernels`, 2 `lab.measure`, 3 `lab.studies`,
4 `lab.report`, 5 the entry points (every other module of `lab`). A module may import modules of
its own layer and of the layers below it, never above. Every import counts, those inside
functions too (a function-local import is how a circle hides), as does `from lab.x import y`
where `y` is a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LAB = Path(__file__).resolve().parent.parent / "lab"
LAYERS = {"lab.cli": 0, "lab.progress": 0, "lab.kernels": 1, "lab.measure": 2, "lab.studies": 3, "lab.report": 4}
ENTRY = 5
NAMES = {0: "command-line conventions", 1: "kernels", 2: "measuring", 3: "studies", 4: "report", 5: "entry points"}


def modules(root: Path) -> dict[str, Path]:
    """Dotted name -> file, for every .py under `root` (a package directory)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name, *path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path], top: str) -> list[tuple[str, int]]:
    """(imported module of the package, line) for every import statement in the file, nested or not."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for t in targets:
            if t.split(".")[0] != top:
                continue
            while t not in known and "." in t:
                t = t.rpartition(".")[0]
            if t != name:
                found.append((t, node.lineno))
    return found


def layer(name: str) -> int:
    best = max((p for p in LAYERS if name == p or name.startswith(p + ".")), key=len, default=None)
    return LAYERS[best] if best else ENTRY


def graph(root: Path) -> dict[str, list[tuple[str, int]]]:
    known = modules(root)
    return {name: imports(name, path, known, root.name) for name, path in known.items()}


def upward(edges: dict[str, list[tuple[str, int]]], layer_of=layer) -> list[str]:
    return [f"{a} (layer {layer_of(a)}, {NAMES[layer_of(a)]}) imports {b} (layer {layer_of(b)}, "
            f"{NAMES[layer_of(b)]}) at line {line}"
            for a, targets in edges.items() for b, line in targets if layer_of(b) > layer_of(a)]


def cycles(edges: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan), and self-loops."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w, _ in edges.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_every_module_is_in_a_layer_and_the_layers_exist():
    names = modules(LAB)
    for package in LAYERS:
        assert package in names, f"{package} is a layer but not a package"
    assert {layer(n) for n in names} == {0, 1, 2, 3, 4, 5}


def test_no_module_imports_a_layer_above_its_own():
    assert upward(graph(LAB)) == []


def test_no_import_circle():
    assert cycles(graph(LAB)) == []


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "lab"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_checks_catch_an_upward_import_and_a_circle_hidden_in_a_function(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "kernels/__init__.py": "",
        "kernels/build.py": "def f():\n    from lab.report import render\n",  # upward, inside a function
        "measure/__init__.py": "",
        "measure/a.py": "from lab.measure import b\n",
        "measure/b.py": "def g():\n    from . import a\n",  # a circle through a relative, local import
        "report/__init__.py": "",
        "report/render.py": "from lab.kernels import build\n",
    })
    edges = graph(root)
    assert upward(edges) == ["lab.kernels.build (layer 1, kernels) imports lab.report.render (layer 4, report) "
                             "at line 2"]
    assert sorted(cycles(edges)) == [["lab.kernels.build", "lab.report.render"], ["lab.measure.a", "lab.measure.b"]]


@pytest.mark.parametrize("line", ["import lab.studies.stages", "from lab.studies import stages",
                                  "from ..studies.stages import run"])
def test_every_import_form_resolves(tmp_path, line):
    root = _package(tmp_path, {"__init__.py": "", "measure/__init__.py": "", "measure/timing.py": line + "\n",
                               "studies/__init__.py": "", "studies/stages.py": "def run(): pass\n"})
    assert [b for b, _ in graph(root)["lab.measure.timing"]] == ["lab.studies.stages"]
