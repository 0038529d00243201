"""compute-sanitizer over every variant on a few small shapes (and the model-input ones it takes).

`python -m lab sanitize` runs this module once per tool (memcheck, racecheck, synccheck,
initcheck) under compute-sanitizer, filtered to the variants' kernels, and reports each tool's
verdict. The target side (`--target`) builds nothing new: it loads the cached builds.
"""

from __future__ import annotations

import subprocess
import sys
import time

from lab.kernels.build import cuda_home
from lab.kernels.shape import Shape

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
# Small shapes: ragged S (not a multiple of any tile), both head dims, causal and not, at D = 128
# several key tiles (a pipeline that wraps around its stages, causal turns); and two with more
# query tiles than an H100/H200 keeps resident (132 SMs), so that a persistent kernel's CTAs each
# take several work tiles (its ring, Q barriers and ping-pong turns carried from one to the next);
# and one D = 64 grid of 2112 work tiles, past the ten an SM from which step 33 runs three CTAs per SM.
SHAPES = ((1, 2, 129, 64, True), (2, 1, 77, 128, False), (1, 1, 300, 128, True),
          (1, 300, 129, 64, False), (1, 160, 257, 128, True), (1, 704, 129, 64, True))
# The inputs real models run (issue 22), for the variants that take them: bf16, and K/V heads shared
# by 2, 4 and all (MQA) query heads, so that a K/V head's index, its tiles' addresses and the bf16
# conversions are checked too; ragged S, both head dims, causal and not, and one grid past the
# resident CTAs (300 query heads on one K/V head: MQA over several waves of work tiles); and two long
# ragged sequences at D = 64 (step 32's 192-key tiles from S = 4096), causal and not; and a bf16
# grouped-query grid of 2816 work tiles at D = 64 (step 33's three CTAs per SM).
MODEL_SHAPES = (Shape(1, 4, 129, 64, True, 2, "bf16"), Shape(2, 8, 77, 128, False, 2, "bf16"),
                Shape(1, 8, 300, 128, True, 1, "fp16"), Shape(1, 300, 129, 64, False, 1, "bf16"),
                Shape(1, 16, 257, 128, True, 4, "bf16"), Shape(1, 2, 4097, 64, True, 1, "bf16"),
                Shape(1, 2, 4097, 64, False, 2, "bf16"), Shape(1, 704, 200, 64, False, 176, "bf16"))
# Only the variants' kernels are checked, except by initcheck: a filtered initcheck does not see
# torch's kernels write the inputs and reports every read of them as uninitialised.
KERNEL_FILTER = "kns=attention_fwd"
UNFILTERED_TOOLS = ("initcheck",)


def target(names: list[str]) -> None:
    import torch

    from lab.kernels import switches, variants

    for name in names:  # a variant, or a knock-out configuration of one (kernel~no_switch)
        attn = switches.build_impl(name).load() if switches.parse_impl(name) else variants.load(name)
        for shape in shapes_for(attn):
            q, k, v = shape.random_inputs()
            attn(q, k, v, is_causal=shape.causal)
        for shape in MODEL_SHAPES:
            if why := attn.not_taken(shape):  # said in the tool's log, which the run's results keep
                print(f"not taken by {name}: {shape.spec} ({why})", flush=True)
        torch.cuda.synchronize()
        print(f"ran {name}", flush=True)


def shapes_for(attn) -> list[Shape]:
    """SHAPES, then the MODEL_SHAPES the variant takes (its not_taken: the library's dtypes and K/V
    heads); the others are not taken, so not run."""
    return [Shape(*s) for s in SHAPES] + [s for s in MODEL_SHAPES if not attn.not_taken(s)]


def sanitizer() -> str:
    home = cuda_home()
    return f"{home}/bin/compute-sanitizer" if home else "compute-sanitizer"


def run(names: list[str], tools=TOOLS, progress=print) -> dict[str, dict]:
    """Returns {tool: {"clean": bool, "seconds": float, "summary": str, "log": str}}."""
    results = {}
    for tool in tools:
        t0 = time.perf_counter()
        kernel_filter = [] if tool in UNFILTERED_TOOLS else ["--kernel-name", KERNEL_FILTER]
        cmd = [sanitizer(), "--tool", tool, "--error-exitcode", "3", *kernel_filter,
               sys.executable, "-m", "lab.kernels.sanitize", "--target", ",".join(names)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        log = proc.stdout + proc.stderr
        summary = next((ln for ln in reversed(log.splitlines()) if "ERROR SUMMARY" in ln or "RACECHECK SUMMARY" in ln),
                       f"exit code {proc.returncode}")
        ran = all(f"ran {n}" in log for n in names)
        clean = proc.returncode == 0 and ran
        results[tool] = {"clean": clean, "seconds": round(time.perf_counter() - t0, 1), "summary": summary.strip(),
                         "log": log[-20000:]}
        progress(f"  {tool:<10} {'clean' if clean else 'NOT CLEAN'}  ({summary.strip()}, {results[tool]['seconds']} s)")
    return results


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--target":
        target(sys.argv[2].split(","))
