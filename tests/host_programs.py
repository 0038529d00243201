"""The kernel headers' host-side rules, compiled for the CPU with nvcc into a small program a test runs
(tests/test_tile_queue.py: step 35's queue order; tests/test_tile_rules.py: the Hopper tile rules)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from lab.kernels import build


def compile_host_program(out: Path, name: str, source: str) -> Path:
    """`source` (C++ that includes kernels/include headers) built into `out`/`name`; returns the executable."""
    src, exe = out / f"{name}.cu", out / name
    src.write_text(source)
    subprocess.run([build.nvcc_path(), "-std=c++17", "-O1", f"-I{build.INCLUDE_DIR}", "-o", str(exe), str(src)],
                   check=True, capture_output=True)
    return exe
