"""Exploration (not the study): step 28's D = 64 tile inside the persistent kernel. Step 13 chose
one consumer warpgroup and two CTAs per SM for the non-persistent kernel, and the tuner kept it for
step 18 (`wgs64`); cuDNN (two consumer warpgroups, one CTA per SM) and FlashAttention-3 (three,
192 query rows) differ. Here: the same step built with FA_TILE_* overrides, checked (fp16 and bf16,
grouped K/V, ragged S, causal and not: the model-inputs exploration's check) and timed beside
SDPA's backends at D = 64 shapes.

usage: PYTHONPATH=. python .../explore_d64_tiles.py "B,H,Hkv,S,D,dtype[,c];..."
   VARIANTS=model_inputs,model_inputs:FA_TILE_WGS_D64=2+FA_TILE_STAGES_D64=4,...  (CAP, CHECK, OUT as there)
"""
import importlib.util
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location(
    "explore_model_inputs", HERE.parent / "2026-11-23-model-inputs" / "explore_model_inputs.py")
base = importlib.util.module_from_spec(spec)
spec.loader.exec_module(base)


def library(spec):
    """'name' or 'name:MACRO=value+MACRO=value' (a configuration built with those defines)."""
    name, _, defines = spec.partition(":")
    d = dict(x.split("=") for x in defines.split("+")) if defines else None
    r = base.build.build_variant(base.get(name), defines=d, impl=spec.replace(":", "~").replace("+", "_").replace("=", "")
                                 if d else None)
    if not r.ok:
        raise SystemExit(f"{spec} did not build:\n{r.log[-3000:]}")
    print(f"{spec}: " + ", ".join(f"D{k['head_dim']} {k.get('dtype', '')} {k['registers']} regs "
                                  f"spill {k['spill_stores']}" for k in r.ptxas), flush=True)
    return _load(r)


def _load(r):
    import ctypes

    lib = ctypes.CDLL(r.library)
    lib.fa_forward_ex.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 5 + [ctypes.c_float, ctypes.c_int,
                                                                               ctypes.c_int, ctypes.c_void_p]
    lib.fa_forward.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 4 + [ctypes.c_float, ctypes.c_int, ctypes.c_void_p]
    return lib


if __name__ == "__main__":
    base.library = library
    sys.argv[0] = str(HERE.parent / "2026-11-23-model-inputs" / "explore_model_inputs.py")
    import os

    names = os.environ.get("VARIANTS", "model_inputs").split(",")
    libs = {n: library(n) for n in names}
    result = {}
    if os.environ.get("CHECK", "1") == "1":
        rows, failures = base.check(libs)
        result = {"check": rows, "failures": failures}
    if len(sys.argv) > 1:
        result["bench"] = base.bench(libs, sys.argv[1].split(";"))
    if os.environ.get("OUT"):
        import json

        json.dump(result, open(os.path.join(os.environ["OUT"], "d64_tiles.json"), "w"))
    if "bench" in result:
        base.print_summary(result["bench"])
