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

CASES = ((128, False), (128, True), (64, False), (64, True))  # (head dim, causal) of FA3's kernels, fp16
DTYPE = "float16"
_KERNEL = re.compile(r"attention_fwd<(.+?)>\(")
_DTYPES = {"__half": "float16", "__nv_bfloat16": "bfloat16"}
_ENUM = re.compile(r"^\((?:\(anonymous namespace\)|[\w:]+)::(\w+)\)(-?\d+)$")  # ((anonymous namespace)::TileKind)0
_TEMPLATE = re.compile(r"template\s*<([^;{}]*?)>\s*__global__\s+void\s+(?:__launch_bounds__\((?:[^()]|\([^()]*\))*\)\s*)?"
                       r"attention_fwd\s*\(", re.S)


def template_parameters(source: str) -> list[str]:
    """The names of a step's kernel's template parameters, in order ("Elem", "D", "KIND", "FROM_QUEUE"),
    from its source; [] where its `template <...> __global__ ... attention_fwd(` is not found."""
    m = _TEMPLATE.search(source)
    if not m:
        return []
    return [re.sub(r"\s*=.*$", "", p.strip()).split()[-1] for p in m.group(1).split(",") if p.strip()]


def _split_arguments(text: str) -> list[str]:
    """Template arguments at the top level of a demangled list (commas inside parentheses or <> kept)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "(<"
        depth -= ch in ")>"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + ([cur.strip()] if cur.strip() else [])


def step_kernels(demangled: list[str], parameters: list[str] | None = None) -> list[dict]:
    """The study's kernels among demangled names (`attention_fwd<Elem, D, ...>`): per kernel its index,
    dtype, head dim, the mask (`causal`: the value of a CAUSAL template parameter, False where a NON_CAUSAL one
    is true; None where the kernel reads the mask at run time) and the other template arguments as
    written: an enum as "TileKind 0", and, with the step's `parameters` (template_parameters), a bool as
    "FROM_QUEUE=true"."""
    out = []
    for i, name in enumerate(demangled):
        m = _KERNEL.search(name)
        if not m:
            continue
        args = _split_arguments(m.group(1))
        if len(args) < 2 or not args[1].isdigit():
            continue
        names = parameters if parameters and len(parameters) == len(args) else [None] * len(args)
        causal, extra = None, []
        for arg, pname in zip(args[2:], names[2:]):
            if pname == "CAUSAL":
                causal = arg == "true"
                continue
            if pname == "NON_CAUSAL":  # step 66 on: true compiles the kernel for non-causal calls only
                causal = False if arg == "true" else causal
                continue
            enum = _ENUM.match(arg)
            extra.append(f"{enum[1]} {enum[2]}" if enum else f"{pname}={arg}" if pname and arg in ("true", "false")
                         else arg)
        out.append({"index": i, "dtype": _DTYPES.get(args[0], args[0]), "head_dim": int(args[1]),
                    "variant_args": ", ".join(extra), "causal": causal})
    return out


def _step_parameters(step: str) -> list[str]:
    try:
        from lab.kernels import variants

        return template_parameters(variants.get(step).path.read_text())
    except Exception:  # noqa: BLE001 - without the names the arguments are shown as written
        return []


def _row(impl: str, kernel: str, head_dim: int, causal: bool | None, sass: str, **extra) -> dict:
    m = sass_mix.loop_mix(sass, head_dim)
    best = m["paths"][0]
    return {"impl": impl, "kernel": kernel, "head_dim": head_dim, "causal": causal, "tile_keys": m["tile_keys"],
            "keys_per_iteration": best["keys"], "loops": len(m["loops"]),
            "paths": [len(lp["paths"]) for lp in m["loops"]],
            "instructions_per_128_keys": best["instructions_per_128_keys"], "per_128_keys": best["per_128_keys"],
            "datapaths_per_128_keys": best["datapaths_per_128_keys"], **extra}


def compare(step: str, step_sass: str, fa3_library: Path | None = None) -> dict:
    """{"rows": [...], "errors": [...]}: a row per fp16 kernel of `step` at the head dims of CASES (every
    tile kind and template choice; `causal` None: the step reads the mask at run time) and per FA3 kernel
    at CASES; a kernel that cannot be read is an error, not a stop."""
    rows, errors = [], []
    names = sass_mix.kernel_names(step_sass)
    mine = step_kernels(sass_mix.demangle(names), _step_parameters(step))
    for head_dim, causal in CASES:
        for k in mine:
            if (k["head_dim"], k["dtype"]) != (head_dim, DTYPE) or k["causal"] not in (None, causal):
                continue
            if k["causal"] is None and causal:  # a run-time mask: one row a kernel, not one a mask
                continue
            try:
                rows.append(_row(step, k["variant_args"] or "-", head_dim, k["causal"],
                                 sass_mix.kernel_sass(step_sass, names[k["index"]])))
            except ValueError as exc:
                errors.append(f"{step} D={head_dim} {k['variant_args']}: {exc}")
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


def row_causal(row: dict) -> bool | None:
    """A row's mask: its "causal", or False where a record written before step_kernels read NON_CAUSAL (runs
    before 2026-12-04) names the argument in its kernel ("NON_CAUSAL=true")."""
    if row["causal"] is None and "NON_CAUSAL=true" in row["kernel"].split(", "):
        return False
    return row["causal"]


def mask_label(causal: bool | None) -> str:
    """A row's mask column: its kernel's compile-time mask, or "at run time" (one kernel for both)."""
    return "at run time" if causal is None else "causal" if causal else "full"


def table(result: dict) -> list[list[str]]:
    """Rows of text: impl, kernel, D, mask, keys an iteration, instructions per 128 keys, each class, then the
    uniform datapath's instructions and the R2UR (sass_mix.datapaths, DATAPATHS' order)."""
    out = []
    for r in result["rows"]:
        out.append([r["impl"], r["kernel"], str(r["head_dim"]), mask_label(row_causal(r)),
                    f"{r['keys_per_iteration']:g}",
                    f"{r['instructions_per_128_keys']:.0f}",
                    *(f"{r['per_128_keys'][c]:.0f}" for c in sass_mix.CLASS_NAMES),
                    *(f"{r['datapaths_per_128_keys'][d]:.0f}" for d in DATAPATHS)])
    return out


DATAPATHS = {"uniform": "uniform datapath", "to uniform": "R2UR"}  # sass_mix.datapaths' keys -> column headings
HEADER = ["impl", "kernel", "D", "mask", "keys / iteration", "instr / 128 keys", *sass_mix.CLASS_NAMES,
          *DATAPATHS.values()]


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
