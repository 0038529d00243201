"""ptxas's report (registers, shared memory, spills) for step 57 and the draft step 68, compiled for sm_90a with the
build's flags (lab.kernels.build.compile_library, no GPU), names demangled, their
argument lists cut. From the repository root with
stream_k_spans.patch applied:

    python data/explorations/2026-12-05-stream-k-decode/ptxas.py tensor_maps_prefetched stream_k_spans > ptxas.txt
"""
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from lab.kernels import build, manifest

for name in sys.argv[1:]:
    with tempfile.TemporaryDirectory() as d:
        ok, log, _ = build.compile_library(manifest.get(name), ["sm_90"], Path(d) / "lib.so", host_opt="-O1")
    print(f"== {name}: compiled {ok}")
    keep = [l.strip() for l in log.splitlines() if re.search(r"Compiling entry|Used \d+ registers|spill", l)]
    names = subprocess.run(["c++filt"], input="\n".join(keep), capture_output=True, text=True).stdout
    print(re.sub(r"\(fa::.*'", "'", names.replace("(anonymous namespace)::", "")))  # the argument lists: the same
