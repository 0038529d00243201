"""The Jupyter kernel manager the notebooks run under (papermill, `lab.pipeline`, the notebook tests).

ipykernel logs "Kernel is running over TCP without encryption" whenever its transport is TCP
(`ipykernel.kernelapp.IPKernelApp.init_sockets`). A kernel started here only ever talks to the
process beside it, so it uses IPC (Unix-domain) sockets instead, in a private temporary folder:
no plain-text TCP ports, and no warning to filter.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from jupyter_client.manager import KernelManager

MANAGER = "lab.jupyter_kernel.IPCKernelManager"  # papermill: execute_notebook(..., kernel_manager_class=MANAGER)


class IPCKernelManager(KernelManager):
    def __init__(self, **kwargs):
        kwargs.setdefault("transport", "ipc")
        self._ipc_dir = tempfile.TemporaryDirectory(prefix="lab-kernel-")
        kwargs.setdefault("ip", str(Path(self._ipc_dir.name) / "kernel"))
        super().__init__(**kwargs)
