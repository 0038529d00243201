"""compute-sanitizer over every variant on a few small shapes (and the model-input ones it takes), and
over every step of the decode branch on its correctness grid (lab.measure.decode_check.decode_grid).

`python -m lab sanitize` runs this module once per tool (memcheck, racecheck, synccheck,
initcheck) and problem under compute-sanitizer, filtered to that problem's kernels, and reports each
tool's verdict. The target side (`--target`) builds nothing new: it loads the cached builds.
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
# grouped-query grid of 2816 work tiles at D = 64 (step 33's three CTAs per SM); and a bf16 grouped-query
# causal grid of 704 192-row tiles at S = 4097 (step 52's three warpgroups fed from the counter); and a bf16 MQA causal
# grid of 286 such tiles, two to three an SM (step 64's mirrored second round); and a bf16 grouped causal D = 128 grid
# at S = 4097 that step 65 takes from the counter in FA3's sections, and the same grid non-causal, which takes step 66's
# non-causal kernel from the counter; and a bf16 grouped causal D = 64 grid of 33.6 MB of K/V at S = 4097, which step 68
# orders in two sections, and one at S = 3001, which step 69 gives the counter's tile.
MODEL_SHAPES = (Shape(1, 4, 129, 64, True, 2, "bf16"), Shape(2, 8, 77, 128, False, 2, "bf16"),
                Shape(1, 8, 300, 128, True, 1, "fp16"), Shape(1, 300, 129, 64, False, 1, "bf16"),
                Shape(1, 16, 257, 128, True, 4, "bf16"), Shape(1, 2, 4097, 64, True, 1, "bf16"),
                Shape(1, 2, 4097, 64, False, 2, "bf16"), Shape(1, 704, 200, 64, False, 176, "bf16"),
                Shape(1, 32, 4097, 64, True, 8, "bf16"), Shape(1, 13, 4097, 64, True, 1, "bf16"),
                Shape(1, 24, 4097, 128, True, 8, "bf16"), Shape(1, 24, 4097, 128, False, 8, "bf16"),
                Shape(1, 64, 4097, 64, True, 32, "bf16"), Shape(1, 32, 3001, 64, True, 8, "bf16"))
# Only the variants' kernels are checked, except by initcheck: a filtered initcheck does not see
# torch's kernels write the inputs and reports every read of them as uninitialised.
KERNEL_FILTER = "kns=attention_fwd"
DECODE_KERNEL_FILTER = "kns=decode_"  # the decode steps' decode_fwd and their split merge, decode_combine_splits
UNFILTERED_TOOLS = ("initcheck",)


def target(names: list[str]) -> None:
    import torch

    from lab.kernels import manifest, switches, variants

    for name in names:  # a variant, or a knock-out configuration of one (kernel~no_switch)
        if not switches.parse_impl(name) and manifest.get(name).problem == manifest.DECODE:
            decode_target(name)
            continue
        attn = switches.build_impl(name).load() if switches.parse_impl(name) else variants.load(name)
        for shape in shapes_for(attn):
            q, k, v = shape.random_inputs()
            attn(q, k, v, is_causal=shape.causal)
        for shape in MODEL_SHAPES:
            if why := attn.not_taken(shape):  # said in the tool's log, which the run's results keep
                print(f"not taken by {name}: {shape.spec} ({why})", flush=True)
        torch.cuda.synchronize()
        print(f"ran {name}", flush=True)


def decode_target(name: str) -> None:
    """A decode step over its correctness grid, every case checked (a failing case is printed: the tool's
    log keeps it, and the step's "ran" line is then withheld, so the tool's verdict is not clean)."""
    import torch

    from lab.kernels import variants
    from lab.measure.decode_check import check_decode_case, decode_grid

    fn = variants.load(name)
    failed = 0
    for i, shape in enumerate(decode_grid()):
        r = check_decode_case(name, lambda q, k, v, lens, table, o: fn(q, k, v, lens, table, out=o), shape, i)
        if not r["passed"]:
            failed += 1
            print(f"FAILED {name} {shape.id}: {r.get('error') or r.get('max_abs_err')}", flush=True)
    torch.cuda.synchronize()
    if not failed:
        print(f"ran {name}", flush=True)


def shapes_for(attn) -> list[Shape]:
    """SHAPES, then the MODEL_SHAPES the variant takes (its not_taken: the library's dtypes and K/V
    heads); the others are not taken, so not run."""
    return [Shape(*s) for s in SHAPES] + [s for s in MODEL_SHAPES if not attn.not_taken(s)]


def sanitizer() -> str:
    home = cuda_home()
    return f"{home}/bin/compute-sanitizer" if home else "compute-sanitizer"


def groups(names: list[str]) -> list[tuple[list[str], str]]:
    """(names, kernel filter) a sanitizer process: the prefill variants and knock-outs under
    KERNEL_FILTER, the decode steps under DECODE_KERNEL_FILTER; an empty group is left out."""
    from lab.kernels import manifest, switches

    decode = [n for n in names if not switches.parse_impl(n) and manifest.get(n).problem == manifest.DECODE]
    prefill = [n for n in names if n not in decode]
    return [(g, f) for g, f in ((prefill, KERNEL_FILTER), (decode, DECODE_KERNEL_FILTER)) if g]


def run(names: list[str], tools=TOOLS, progress=print, runner=subprocess.run) -> dict[str, dict]:
    """Returns {tool: {"clean": bool, "seconds": float, "summary": str, "log": str}}: a tool is clean where
    each of its processes (one a problem: groups) exits 0 and says it ran every variant given."""
    results = {}
    for tool in tools:
        t0 = time.perf_counter()
        clean, summaries, log = True, [], ""
        for group, name_filter in groups(names):
            kernel_filter = [] if tool in UNFILTERED_TOOLS else ["--kernel-name", name_filter]
            cmd = [sanitizer(), "--tool", tool, "--error-exitcode", "3", *kernel_filter,
                   sys.executable, "-m", "lab.measure.sanitize", "--target", ",".join(group)]
            proc = runner(cmd, capture_output=True, text=True)
            out = proc.stdout + proc.stderr
            summaries.append(next((ln.strip() for ln in reversed(out.splitlines())
                                   if "ERROR SUMMARY" in ln or "RACECHECK SUMMARY" in ln),
                                  f"exit code {proc.returncode}"))
            clean = clean and proc.returncode == 0 and all(f"ran {n}" in out.splitlines() for n in group)
            log += out
        summary = "; ".join(summaries)
        results[tool] = {"clean": clean, "seconds": round(time.perf_counter() - t0, 1), "summary": summary,
                         "log": log[-20000:]}
        progress(f"  {tool:<10} {'clean' if clean else 'NOT CLEAN'}  ({summary}, {results[tool]['seconds']} s)")
    return results


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--target":
        target(sys.argv[2].split(","))
