"""Per mnemonic, the instructions a warp issues per 128 keys on the shortest path of the D = 128 K/V loop: step 53's
kernel (TileKind 0, the static list) against FlashAttention-3's plain forward kernels at head dim 128 (128 x 176 full,
128 x 128 causal), fp16, from their SASS (no GPU). Call 1 found step 53 executing 1.49x FA3's fmaheavy-pipe
instructions at (1, 16, 16384, 128); on GH100 that pipe alone takes IMAD (and IDP) besides its share of FP32 work,
so the IMAD lines here are the static side of that count. Uses lab.kernels.sass_mix and lab.studies.sass_compare.

    PYTHONPATH=. python data/explorations/2026-12-02-launch-by-launch/opcode_mix.py > opcode_mix.txt
    PYTHONPATH=. python .../opcode_mix.py FA_EXP_FINITE_MAX=1   # step 53 built with these defines (a patch applied)
"""
import sys
from collections import Counter

from lab.kernels import sass_mix, switches
from lab.measure import fa3
from lab.studies import sass_compare


def shortest_path_opcodes(sass: str, head_dim: int) -> tuple[Counter, float]:
    """Mnemonic counts (with the first modifier: IMAD.MOV, FMUL.FTZ) on the fewest-instructions-per-key path of
    the kernel's main loops, and the keys that path covers."""
    instrs = sass_mix.parse(sass)
    best = None
    for head, back in sass_mix.main_loops(instrs):
        for p in sass_mix.paths(instrs, head, back):
            keys = sass_mix.keys_of(instrs, p, head_dim)
            if best is None or len(p) / keys < len(best[0]) / best[1]:
                best = (p, keys)
    path, keys = best
    return Counter(".".join(instrs[i].opcode.split(".")[:2]) for i in path), keys


def main() -> None:
    defines = dict(a.split("=", 1) for a in sys.argv[1:]) or None
    step_sass = switches.sass("two_stages_three_wgs_d64", "sm_90a", defines)
    names = sass_mix.kernel_names(step_sass)
    mine = sass_compare.step_kernels(sass_mix.demangle(names), ["Elem", "D", "KIND", "FROM_QUEUE"])
    k = next(k for k in mine if k["head_dim"] == 128 and k["dtype"] == "float16"
             and k["variant_args"] == "HopperTileKind 0, FROM_QUEUE=false")
    rows = {"step 53" + (" " + " ".join(sys.argv[1:]) if defines else ""): shortest_path_opcodes(sass_mix.kernel_sass(step_sass, names[k["index"]]), 128)}
    lib = fa3.library_path()
    fa3_names = sass_mix.entry_names(lib)
    kernels = fa3.forward_kernels(sass_mix.demangle(fa3_names))
    for causal in (False, True):
        f = fa3.plain_forward_kernel(kernels, 128, causal, "float16")
        label = f"FA3 {f['rows']} x {f['keys']}" + (" causal" if causal else "")
        rows[label] = shortest_path_opcodes(sass_mix.entry_sass(lib, fa3_names[f["index"]]), 128)
    per128 = {label: {op: n * 128 / keys for op, n in c.items()} for label, (c, keys) in rows.items()}
    ops = sorted({op for c in per128.values() for op in c},
                 key=lambda op: (sass_mix.classify(op), -next(iter(per128.values())).get(op, 0), op))
    labels = list(per128)
    print(f"{'class':20s} {'mnemonic':18s} " + " ".join(f"{l:>22s}" for l in labels))
    for op in ops:
        print(f"{sass_mix.classify(op):20s} {op:18s} " + " ".join(f"{per128[l].get(op, 0):22.1f}" for l in labels))
    print(f"{'':20s} {'all':18s} " + " ".join(f"{sum(per128[l].values()):22.1f}" for l in labels))
    imad = {l: sum(v for op, v in per128[l].items() if op.startswith(("IMAD", "IDP"))) for l in labels}
    print(f"{'':20s} {'IMAD and IDP':18s} " + " ".join(f"{imad[l]:22.1f}" for l in labels))


if __name__ == "__main__":
    main()
