"""How an Nsight Compute process is run: where ncu is, its process group (killed whole on a timeout, its
target included), the GPU it is given and that GPU's lock folder, and the one-line reason a run failed.
lab.measure.profile (the profile's metrics) and lab.measure.ncu_xval (ncu's time per launch) run ncu
through here."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

from lab.kernels.manifest import REPO


def find_ncu() -> str | None:
    """ncu on PATH, else <cuda_home>/bin/ncu, else None."""
    found = shutil.which("ncu")
    if found:
        return found
    from lab.kernels.build import cuda_home

    home = cuda_home()
    if home:
        cand = Path(home, "bin", "ncu")
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return None


def first_line(text: str, needle: str) -> str | None:
    """The first line of `text` holding `needle`, stripped; None where none does."""
    return next((ln.strip() for ln in text.splitlines() if needle in ln), None)


def failure_reason(returncode: int, out: str, err: str) -> str | None:
    both = out + "\n" + err
    if "ERR_NVGPUCTRPERM" in both:
        return ("no permission to read GPU performance counters (ERR_NVGPUCTRPERM): run as root or set "
                "NVreg_RestrictProfilingToAdminUsers=0")
    if returncode != 0:
        details = []
        ncu_error = first_line(both, "==ERROR==")
        if ncu_error:
            details.append(ncu_error)
        # the target's own last words (a Python exception's message), where it printed any
        tail = [ln.strip() for ln in err.splitlines() if ln.strip() and not ln.lstrip().startswith("==")]
        if tail:
            details.append(tail[-1])
        detail = " | ".join(details)
        return f"ncu exited with code {returncode}" + (f": {detail[:400]}" if detail else "")
    return None


def ncu_tmpdir(gpu: str) -> Path:
    """The TMPDIR an ncu of GPU `gpu` runs with (created): Nsight Compute serializes every profiling session
    of a host through one lock file, $TMPDIR/nsight-compute-lock, so processes profiled on different GPUs
    would wait for each other; with a lock a GPU they profile side by side, and two on one GPU still wait."""
    import re
    import tempfile

    path = Path(tempfile.gettempdir()) / f"lab-ncu-gpu-{re.sub(r'[^A-Za-z0-9_.-]', '_', gpu)}"
    path.mkdir(exist_ok=True)
    return path


def run_in_group(cmd: list[str], timeout: float, gpu: str | None = None) -> tuple[int, str, str]:
    """Run cmd in its own process group (ncu's target included), killed whole on timeout; `gpu`: the
    CUDA_VISIBLE_DEVICES entry it is given (None: this process's GPUs), and a TMPDIR of that GPU's own
    (ncu_tmpdir)."""
    env = None if gpu is None else {**os.environ, "CUDA_VISIBLE_DEVICES": gpu, "TMPDIR": str(ncu_tmpdir(gpu))}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            start_new_session=True, env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
        proc.communicate()
        raise
    return proc.returncode, out, err
