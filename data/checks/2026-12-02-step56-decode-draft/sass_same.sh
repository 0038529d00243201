#!/bin/bash
# SASS only, on the CPU machine (nvcc 13.0, sm_90a): steps 54 and 55 before and after launcher_refactor.patch, and
# step 56 (step56.patch on top) against step 55, kernel by kernel (the refactor moves host code only: every kernel's
# SASS must be the same; the cubin may order them differently). Run from the repository root at the commit that adds
# this folder:  bash data/checks/2026-12-02-step56-decode-draft/sass_same.sh > data/checks/2026-12-02-step56-decode-draft/sass_same.txt
set -e
D=data/checks/2026-12-02-step56-decode-draft
W=$(mktemp -d); git worktree add -q --detach $W/before HEAD; git worktree add -q --detach $W/after HEAD
trap 'git worktree remove --force $W/before; git worktree remove --force $W/after; rm -rf $W' EXIT
(cd $W/after && git apply $OLDPWD/$D/launcher_refactor.patch $OLDPWD/$D/step56.patch)
CUOBJ=$(ls .venv/lib/python3*/site-packages/nvidia/cu13/bin/cuobjdump 2>/dev/null | head -1); CUOBJ=${CUOBJ:-cuobjdump}
sass() {  # tree, step file -> its SASS
  nvcc -std=c++17 -O3 --expt-relaxed-constexpr -gencode arch=compute_90a,code=sm_90a -I$1/kernels/include -cubin \
    $1/kernels/variants/$2.cu -o $W/$2.$(basename $1).cubin && $CUOBJ -sass $W/$2.$(basename $1).cubin
}
sass $W/before 54_chunks_one_cta_an_sm > $W/54.before; sass $W/after 54_chunks_one_cta_an_sm > $W/54.after
sass $W/before 55_wide_groups_in_row_blocks > $W/55.before; sass $W/after 55_wide_groups_in_row_blocks > $W/55.after
sass $W/after 56_row_blocks_fill_one_wave > $W/56.after
python3 - $W <<'PY'
import re, sys
w = sys.argv[1]
def kernels(path):  # kernel name (the anonymous namespace's per-file tag taken out) -> its SASS
    out = {}
    for part in re.split(r"\n(?=\t\tFunction : )", open(path).read()):
        m = re.match(r"\t\tFunction : (\S+)", part)
        if m:
            tag = lambda t: re.sub(r"\d+_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]{8}", "NS", t)
            out[tag(m.group(1))] = tag(part[part.index("\n"):]).strip()
    return out
for a, b in (("54.before", "54.after"), ("55.before", "55.after"), ("55.after", "56.after")):
    ka, kb = kernels(f"{w}/{a}"), kernels(f"{w}/{b}")
    same = sum(ka[k] == kb.get(k) for k in ka)
    print(f"{a} against {b}: {len(ka)} and {len(kb)} kernels, the same names: {set(ka) == set(kb)}, "
          f"the same SASS: {same} of {len(ka)}")
PY
