"""pyproject.toml packages what the code is: every module of every subpackage and the report's
templates in a wheel, and the Python version the code needs."""

import ast
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_a_wheel_holds_every_module_and_template(tmp_path):
    src = tmp_path / "src"  # a copy: building in the tree would leave build/ and *.egg-info in it
    src.mkdir()
    shutil.copy(REPO / "pyproject.toml", src)
    shutil.copytree(REPO / "lab", src / "lab", ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {p.relative_to(REPO).as_posix() for p in (REPO / "lab").rglob("*")
              if p.is_file() and "__pycache__" not in p.parts}
    assert any(n.endswith(".j2") for n in wanted) and any(n.endswith(".css") for n in wanted)
    assert sorted(wanted - names) == [], "left out of the wheel"
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    assert "Requires-Python: >=3.11" in zipfile.ZipFile(wheel).read(meta).decode()


def test_the_declared_python_is_the_one_the_code_needs():
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    minor = int(re.fullmatch(r">=3\.(\d+)", declared).group(1))
    uses_tomllib = [p for p in (REPO / "lab").rglob("*.py")
                    if any(isinstance(n, (ast.Import, ast.ImportFrom))
                           and "tomllib" in ([a.name for a in n.names] if isinstance(n, ast.Import) else [n.module])
                           for n in ast.walk(ast.parse(p.read_text())))]
    assert uses_tomllib and minor >= 11, "tomllib is in the standard library from Python 3.11"
    assert sys.version_info >= (3, minor)
