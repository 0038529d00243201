"""What the compiler says about a variant's kernels: ptxas's resource report (registers, spills, stack,
static shared memory, barriers) per kernel, the head dim and element type a mangled kernel name was
instantiated for, and the compiler's own error lines without the build tool's noise."""

from __future__ import annotations

import re

_PTXAS_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(\w+)'")
_PTXAS_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_USED = re.compile(r"Used (\d+) registers")
_PTXAS_SMEM = re.compile(r"(\d+) bytes smem")
_PTXAS_BARRIERS = re.compile(r"used (\d+) barriers")
# The head dim is the kernel template's first int argument, after the element type where the kernel
# takes one ("attention_fwdILi64E..." or "attention_fwdI6__halfLi64E...", "...I13__nv_bfloat16Li64E...").
_HEAD_DIM = re.compile(r"I(?:\d+_\w*?)?Li(\d+)E")


def head_dim(kernel_name: str) -> int | None:
    """The head dim a kernel's mangled name was instantiated for (template<typename T, int D, ...>)."""
    m = _HEAD_DIM.search(kernel_name)
    return int(m.group(1)) if m else None


def parse_ptxas(log: str) -> list[dict]:
    """One record per compiled kernel: registers, spills, stack frame, static smem, barriers."""
    kernels: list[dict] = []
    for line in log.splitlines():
        if m := _PTXAS_ENTRY.search(line):
            kernels.append(
                {
                    "kernel": m.group(1),
                    "head_dim": head_dim(m.group(1)),
                    "dtype": "bf16" if "__nv_bfloat16" in m.group(1) else "fp16",
                    "arch": m.group(2),
                    "registers": None,
                    "spill_stores": 0,
                    "spill_loads": 0,
                    "stack_frame": 0,
                    "static_smem": 0,
                    "barriers": 0,
                }
            )
        elif kernels and (m := _PTXAS_FRAME.search(line)):
            kernels[-1].update(stack_frame=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        elif kernels and (m := _PTXAS_USED.search(line)):
            kernels[-1]["registers"] = int(m.group(1))
            if s := _PTXAS_SMEM.search(line):
                kernels[-1]["static_smem"] = int(s.group(1))
            if b := _PTXAS_BARRIERS.search(line):
                kernels[-1]["barriers"] = int(b.group(1))
    return kernels


def compile_errors(log: str, limit: int = 40) -> str:
    """The compiler's own complaint, without the ninja command lines around it."""
    lines = [ln for ln in log.splitlines() if re.search(r"error|Error|fatal", ln) and not ln.startswith("[")]
    return "\n".join(lines[:limit]) or log[-4000:]
