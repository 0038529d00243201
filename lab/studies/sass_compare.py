"""A step's main loop beside FlashAttention-3's, instruction class by instruction class (issue 46's first
step: "count before you change"): lab.kernels.sass_mix over the step's kernels and FA3's plain forward
kernel of the same head dim and mask, per 128 keys of a warp's 16 query rows (tiles differ: FA3 takes 176
keys at head dim 128, 192 at 64), the shortest path through each loop (the steady state: no mask, no
rescale where the loop skips it).

    python -m lab.studies.sass_compare [VARIANT] [--json OUT]     # default: the sm_90a branch end

The step's SASS comes from its compiled library (the profile stage) or from nvcc -cubin here
(lab.kernels.switches.sass, no GPU); FA3's from its library (lab.measure.fa3.library_path) where present.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from lab.kernels import sass_mix

CASES = ((128, False), (128, True), (64, False), (64, True))  # (head dim, causal), fp16
DTYPE = "float16"
_KERNEL = re.compile(r"attention_fwd<(\w+), (\d+)(?:, (.+?))?, (true|false)>\(")
_DTYPES = {"__half": "float16", "__nv_bfloat16": "bfloat16"}


def step_kernels(demangled: list[str]) -> list[dict]:
    """The study's kernels among demangled names (`attention_fwd<Elem, D[, ...], CAUSAL>`): per kernel its
    index, dtype, head dim, causal flag and the other template arguments as written (a tile kind)."""
    out = []
    for i, name in enumerate(demangled):
        m = _KERNEL.search(name)
        if m:
            extra = re.sub(r"\(\(anonymous namespace\)::(\w+)\)(\d+)", r"\1 \2", m.group(3) or "")
            out.append({"index": i, "dtype": _DTYPES.get(m.group(1), m.group(1)), "head_dim": int(m.group(2)),
                        "variant_args": extra, "causal": m.group(4) == "true"})
    return out


def _row(impl: str, kernel: str, head_dim: int, causal: bool, sass: str, **extra) -> dict:
    m = sass_mix.loop_mix(sass, head_dim)
    best = m["paths"][0]
    return {"impl": impl, "kernel": kernel, "head_dim": head_dim, "causal": causal, "tile_keys": m["tile_keys"],
            "keys_per_iteration": best["keys"], "loops": len(m["loops"]),
            "paths": [len(lp["paths"]) for lp in m["loops"]],
            "instructions_per_128_keys": best["instructions_per_128_keys"], "per_128_keys": best["per_128_keys"],
            **extra}


def compare(step: str, step_sass: str, fa3_library: Path | None = None) -> dict:
    """{"rows": [...], "errors": [...]}: a row per kernel of `step` (every tile kind) and per FA3 kernel at
    CASES, fp16; a kernel that cannot be read is an error, not a stop."""
    rows, errors = [], []
    names = sass_mix.kernel_names(step_sass)
    mine = step_kernels(sass_mix.demangle(names))
    for head_dim, causal in CASES:
        for k in mine:
            if (k["head_dim"], k["causal"], k["dtype"]) != (head_dim, causal, DTYPE):
                continue
            try:
                rows.append(_row(step, k["variant_args"] or "-", head_dim, causal,
                                 sass_mix.kernel_sass(step_sass, names[k["index"]])))
            except ValueError as exc:
                errors.append(f"{step} D={head_dim} causal={causal} {k['variant_args']}: {exc}")
    if fa3_library is not None:
        from lab.measure import fa3

        fa3_names = sass_mix.entry_names(fa3_library)
        kernels = fa3.forward_kernels(sass_mix.demangle(fa3_names))
        for head_dim, causal in CASES:
            try:
                k = fa3.plain_forward_kernel(kernels, head_dim, causal, DTYPE)
                rows.append(_row("flash_attn3", f"{k['rows']} x {k['keys']}, {k['stages']} stages", head_dim, causal,
                                 sass_mix.entry_sass(fa3_library, fa3_names[k["index"]])))
            except ValueError as exc:
                errors.append(f"flash_attn3 D={head_dim} causal={causal}: {exc}")
    return {"dtype": DTYPE, "rows": rows, "errors": errors}


def table(result: dict) -> list[list[str]]:
    """Rows of text: impl, kernel, D, mask, keys an iteration, instructions per 128 keys, then each class."""
    out = []
    for r in result["rows"]:
        out.append([r["impl"], r["kernel"], str(r["head_dim"]), "causal" if r["causal"] else "full",
                    f"{r['keys_per_iteration']:g}",
                    f"{r['instructions_per_128_keys']:.0f}",
                    *(f"{r['per_128_keys'][c]:.0f}" for c in sass_mix.CLASS_NAMES)])
    return out


HEADER = ["impl", "kernel", "D", "mask", "keys / iteration", "instr / 128 keys", *sass_mix.CLASS_NAMES]


def main(argv: list[str] | None = None) -> int:
    from lab.cli import OneLineParser
    from lab.kernels import switches
    from lab.kernels.manifest import headline_end
    from lab.kernels.variants import names

    ap = OneLineParser(prog="python -m lab.studies.sass_compare", description=__doc__.splitlines()[0])
    ap.add_argument("variant", nargs="?", help="a step (default: the sm_90a branch end)")
    ap.add_argument("--json", type=Path, help="write the rows here")
    a = ap.parse_args(argv)
    step = a.variant or headline_end(names())
    try:
        from lab.measure import fa3

        library = fa3.library_path()
    except FileNotFoundError as exc:
        print(f"FA3 left out: {exc}", file=sys.stderr)
        library = None
    result = compare(step, switches.sass(step, "sm_90a"), library)
    if a.json:
        a.json.write_text(json.dumps(result, indent=1))
    print(" | ".join(HEADER))
    for row in table(result):
        print(" | ".join(row))
    for e in result["errors"]:
        print("error:", e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
