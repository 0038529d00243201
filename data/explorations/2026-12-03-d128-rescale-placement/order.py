"""The order of events on the shortest path of a D = 128 K/V loop, one character an instruction (SASS only, no GPU):
the last sm_90a step's fp16 kernel of HopperTileKind 0 from the static list (built from the step's file with
FA_SASS_FP16_ONLY and the defines given, comma-separated, and -Xptxas=--register-usage-level=N where LEVEL=N is
set), or FlashAttention-3's plain forward kernels of head dim 128 (its library, .fa3), non-causal and causal.

    G HGMMA   a WARPGROUP.ARRIVE   |W0x1| |W0x0| WARPGROUP.DEPBAR (wgmma wait)   |BAR.SYNC| |BAR.ARV| named barrier
    |S| SYNCS (mbarrier)   e MUFU   m FMUL   + FADD   f FFMA   x FMNMX   c F2FP   s SHFL   . anything else

    PYTHONPATH=. python order.py ours [DEFINES] | fa3
    PYTHONPATH=. python order.py ours64 | fa3-64    # head dim 64: the counter's three-warpgroup tile (HopperTileKind
                                                    # 4, causal calls) and the static one (3); FA3's, both masks
"""
import os
import sys

from lab.kernels import build, sass_mix, switches

KEYS = "e m + f x c".split()


def char(ins) -> str:
    op = ins.opcode
    m = op.split(".")[0]
    if m == "HGMMA":
        return "G"
    if op.startswith("WARPGROUP.DEPBAR"):
        return "|W" + ins.operands.split(",")[-1].strip() + "|"
    if op.startswith("WARPGROUP.ARRIVE"):
        return "a"
    if m == "BAR":
        return "|BAR." + op.split(".")[1] + "|"
    if m.startswith("SYNCS"):
        return "|S|"
    return {"MUFU": "e", "FMUL": "m", "FADD": "+", "FFMA": "f", "FMNMX": "x", "F2FP": "c", "SHFL": "s"}.get(m, ".")


def show(label: str, sass: str, head_dim: int = 128) -> None:
    instrs = sass_mix.parse(sass)
    per, path = sass_mix.shortest_path(instrs, head_dim)
    seq = "".join(char(instrs[i]) for i in path)
    before, _, after = seq.partition("|W0x0|")
    count = lambda s: ", ".join(f"{k} {s.count(k)}" for k in KEYS)
    print(f"== {label}: {len(path)} instructions on the path, {per:.0f} per 128 keys")
    print(f"   before P V's wait (|W0x0|): {count(before)}")
    print(f"   after it:                   {count(after)}; the last FMUL at position {len(after) - after.rfind('m')} "
          "from the path's end")
    print(seq)


if sys.argv[1] == "ours64":
    text = switches.sass("one_loop_causal_short_d64", "sm_90a", {"FA_SASS_FP16_ONLY": "1"}, twin=False)
    for kind, label in (("KindE4ELb1ELb0E", "the counter's tile (kind 4), causal calls"),
                        ("KindE3ELb0ELb0E", "the static three-warpgroup tile (kind 3)")):
        show(f"step 60 head dim 64, {label}",
             sass_mix.kernel_sass(text, sass_mix.find_kernel(text, "attention_fwdI6__halfLi64E", kind)), 64)
elif sys.argv[1] in ("fa3", "fa3-64"):  # FlashAttention-3's plain forward kernels of the head dim, both masks
    from lab.measure import fa3

    head_dim = 64 if sys.argv[1] == "fa3-64" else 128
    lib = fa3.library_path()
    names = sass_mix.entry_names(lib)
    for causal in (False, True):
        k = fa3.plain_forward_kernel(fa3.forward_kernels(sass_mix.demangle(names)), head_dim, causal, "float16")
        show(f"FA3 head dim {head_dim}, {'causal' if causal else 'non-causal'}",
             sass_mix.entry_sass(lib, names[k["index"]]), head_dim)
else:  # ours [DEFINES]
    defines = {"FA_SASS_FP16_ONLY": "1", **{kv.split("=")[0]: kv.split("=")[1]
                                            for kv in (sys.argv[2].split(",") if len(sys.argv) > 2 else []) if kv}}
    if os.environ.get("LEVEL"):
        build.NVCC_FLAGS.append(f"-Xptxas=--register-usage-level={os.environ['LEVEL']}")
    text = switches.sass("one_loop_causal_short_d64", "sm_90a", defines, twin=False)
    sass = sass_mix.kernel_sass(text, sass_mix.find_kernel(text, "attention_fwdI6__halfLi128E", "KindE0ELb0E"))
    show(f"step 60 {' '.join(sys.argv[2:])} {'register-usage-level ' + os.environ['LEVEL'] if os.environ.get('LEVEL') else ''}", sass)
