"""Step 65's fp16 D = 128 kernels (static list Lb0, counter Lb1) with FA_HALF_DIAGONAL_D128 off and on, SASS only, no
GPU: ptxas's report for the D = 128 kernels (registers, spills, any wgmma serialization warning), the unmasked loop's
shortest path a 128 keys (lab.kernels.sass_mix.shortest_path: the branch sits outside it, so it must not move), and
the wgmma count of each kernel (the half tile's N = 64 S and 4-k-step P V add instructions, not loop ones). With
explore.patch applied:

    git apply data/explorations/2026-12-04-half-diagonal-d128/explore.patch
    PYTHONPATH=. python data/explorations/2026-12-04-half-diagonal-d128/paths.py ['{"label": {defines}, ...}']
    git apply -R data/explorations/2026-12-04-half-diagonal-d128/explore.patch
"""
import tempfile
from pathlib import Path

from lab.kernels import build, sass_mix, variants
from lab.kernels import switches as sw
from lab.kernels.ptxas import parse_ptxas

STEP = "fa3_sections_causal_d128"
import json, sys
CONFIGS = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {"s65": {}, "hd": {"FA_HALF_DIAGONAL_D128": "1"}}
for label, defines in CONFIGS.items():
    defines = {"FA_SASS_FP16_ONLY": "1", **defines}
    with tempfile.TemporaryDirectory() as out:
        ok, log, _ = build.compile_check(variants.get(STEP), "sm_90a", out_dir=Path(out), defines=defines, twin=True)
    assert ok, log[-2000:]
    warnings = sorted({l.strip() for l in log.splitlines() if "serializ" in l.lower() or "warning" in l.lower()})
    for k in parse_ptxas(log):
        if "Li128E" in k.get("name", ""):
            print(f"{label} {k['name'][:60]}: {k.get('registers')} registers, spill stores {k['spill_stores']} B")
    print(f"{label} ptxas warnings: {warnings or 'none'}")
    text = sw.sass(STEP, "sm_90a", defines, twin=True)
    for kind in ("KindE0ELb0ELb0E", "KindE0ELb1ELb0E"):
        sass = sass_mix.kernel_sass(text, sass_mix.find_kernel(text, "attention_fwdI6__halfLi128E", kind))
        instrs = sass_mix.parse(sass)
        per, path = sass_mix.shortest_path(instrs, 128)
        wgmma = sum(1 for i in instrs if i.opcode.startswith("HGMMA"))
        local = sum(1 for i in instrs if i.opcode.startswith(("LDL", "STL")))
        print(f"{label} {kind}: {per:.1f} per 128 keys, path {len(path)} instr, {len(instrs)} in kernel, "
              f"{wgmma} HGMMA, local ld/st {local}")
