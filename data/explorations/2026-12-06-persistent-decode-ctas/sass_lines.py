"""Where step 72's extra code is, by source line (no GPU: nvcc and nvdisasm): the bf16, D = 64, 16-row
kernel of step 70 and of step 72, each instruction given to the source line nvdisasm --print-line-info names (the
innermost inlined place, from the build's -lineinfo), counted per header and, for fa/decode_persistent.cuh, per line
with its text. Static counts: what the code holds, not how often it runs. From the repository root, step72.patch
applied:

    python data/explorations/2026-12-06-persistent-decode-ctas/sass_lines.py
"""
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from lab.kernels import build, variants
from lab.kernels.switches import cuobjdump_path

KERNELS = {"l2_promotion_by_gpu": "10decode_fwdI13__nv_bfloat16Li64ELi1E",
           "persistent_decode_ctas": "decode_fwd_persistentI13__nv_bfloat16Li64ELi1E"}
HEADER = variants.KERNELS_DIR / "include" / "fa" / "decode_persistent.cuh"


def by_line(lines_text: str, part: str) -> Counter:
    """(file name, line) -> instructions, over the one kernel whose section name holds `part`."""
    section = next(s for s in lines_text.split("//--------------------- .text.")[1:] if part in s.split("\n", 1)[0])
    where, counts = None, Counter()
    for line in section.split("\n"):
        if m := re.search(r'//## File "([^"]+)", line (\d+)', line):
            where = (Path(m.group(1)).name, int(m.group(2)))
        elif re.match(r"\s+/\*[0-9a-f]{4,}\*/", line):
            counts[where] += 1
    return counts


counts = {}
nvdisasm = Path(cuobjdump_path()).with_name("nvdisasm")  # the wheel or CUDA keeps it beside cuobjdump
for name, part in KERNELS.items():
    with tempfile.TemporaryDirectory() as tmp:
        ok, log, _ = build.compile_check(variants.get(name), "sm_90", out_dir=Path(tmp))  # the step's cubin
        assert ok, log
        text = subprocess.run([str(nvdisasm), "--print-line-info", str(next(Path(tmp).glob("*.cubin")))],
                              capture_output=True, text=True, check=True).stdout
    counts[name] = by_line(text, part)
a, b = counts.values()
files = sorted({f for f, _ in a} | {f for f, _ in b})
print(f"instructions: step 70 {sum(a.values())}, step 72 {sum(b.values())}")
for f in files:
    na, nb = (sum(n for (g, _), n in c.items() if g == f) for c in (a, b))
    if na or nb:
        print(f"  {f:24s} {na:5d} {nb:5d} {nb - na:+5d}")
source = HEADER.read_text().split("\n")
print(f"{HEADER.name}, its lines of 10 instructions or more:")
for (f, line), n in sorted(b.items(), key=lambda x: x[0][1]):
    if f == HEADER.name and n >= 10:
        print(f"  {line:4d} {n:4d}  {source[line - 1].strip()[:90]}")
