#!/bin/bash
# SASS only, on the CPU machine (nvcc 13.0, sm_90a): the decode steps that share step 57's kernels (44-47, 54-56)
# compiled before and after step57.patch (on ../2026-12-02-step56-decode-draft's two patches), kernel by kernel: the
# patch gives the shared kernels a template flag, false for them, so their SASS must be the same but for the names'
# added `false` (Lb0E); and step 57's kernels, each decode_fwd with its two tensor-map prefetches (UTMACCTL.PF).
# From the repository root at the commit that adds this folder:
#   bash data/checks/2026-12-02-step57-decode-draft/sass_same.sh > data/checks/2026-12-02-step57-decode-draft/sass_same.txt
set -e
S=data/checks/2026-12-02-step56-decode-draft; E=data/checks/2026-12-02-step57-decode-draft
W=$(mktemp -d); git worktree add -q --detach $W/before HEAD; git worktree add -q --detach $W/after HEAD
trap 'git worktree remove --force $W/before; git worktree remove --force $W/after; rm -rf $W' EXIT
(cd $W/before && git apply $OLDPWD/$S/launcher_refactor.patch $OLDPWD/$S/step56.patch)
(cd $W/after && git apply $OLDPWD/$S/launcher_refactor.patch $OLDPWD/$S/step56.patch $OLDPWD/$E/step57.patch)
CUOBJ=$(ls .venv/lib/python3*/site-packages/nvidia/cu13/bin/cuobjdump 2>/dev/null | head -1); CUOBJ=${CUOBJ:-cuobjdump}
export CUOBJ W
for t in before after; do
  for f in $W/$t/kernels/variants/4[4-7]_*.cu $W/$t/kernels/variants/5[4-7]_*.cu; do echo $t $f; done
done | xargs -P 2 -L 1 bash -c 'b=$(basename $1 .cu); nvcc -std=c++17 -O3 --expt-relaxed-constexpr \
  -gencode arch=compute_90a,code=sm_90a -I$W/$0/kernels/include -cubin $1 -o $W/$0.$b.cubin && $CUOBJ -sass $W/$0.$b.cubin > $W/$0.$b.sass'
python3 - $W <<'PY'
import glob, os, re, sys
w = sys.argv[1]
def kernels(path):  # name -> SASS, the per-file anonymous-namespace tags and the added `false` taken out
    text = re.sub(r"\d+_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]{8}", "ANON", open(path).read()).replace("Lb0E", "")
    out = {}
    for part in re.split(r"\n(?=\s*Function : )", text):
        m = re.match(r"\s*Function : (\S+)", part)
        if m:
            out[m.group(1)] = re.sub(r"[ \t]+", " ", part[part.index("\n"):]).strip()
    return out
for path in sorted(glob.glob(f"{w}/before.*.sass")):
    step = os.path.basename(path)[len("before."):-len(".sass")]
    a, b = kernels(path), kernels(f"{w}/after.{step}.sass")
    print(f"{step}: {len(a)} kernels before, {len(b)} after, the same names: {set(a) == set(b)}, "
          f"the same SASS: {sum(a[k] == b.get(k) for k in a)} of {len(a)}")
k57 = kernels(f"{w}/after.57_tensor_maps_prefetched.sass")
per = {k: v.count("UTMACCTL.PF") for k, v in k57.items()}
main = {k: n for k, n in per.items() if "decode_fwd" in k}
print(f"57_tensor_maps_prefetched: {len(k57)} kernels; UTMACCTL.PF in each of its {len(main)} decode_fwd kernels: "
      f"{sorted(set(main.values()))}; in the others: {sorted({n for k, n in per.items() if k not in main})}")
def first(sass, op):  # the address of the first instruction `op` in a kernel's SASS
    m = re.search(r"/\*([0-9a-f]{4,})\*/ (?:@!?U?P\w+ )?" + re.escape(op), sass)
    return m.group(1) if m else None
for k in sorted(main):
    print(f"  {re.sub(r'ANON|_ZN|N2fa', '', k)[:48]:<48} prefetches from {first(k57[k], 'UTMACCTL.PF')}, "
          f"first global load (the length) at {first(k57[k], 'LDG')}")
PY
