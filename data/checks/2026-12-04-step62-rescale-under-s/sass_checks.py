"""Step 62's CPU checks (SASS only, nvcc 13.0): which kernels change against step 61, spills, the twin, the knock-out,
and the D = 128 and counter D = 64 loops' shortest paths (lab.kernels.sass_mix.shortest_path)."""
from lab.kernels import sass_mix
from lab.kernels import switches as sw
from lab.kernels.build import compile_check
from lab.kernels.manifest import manifest

STEP, PARENT = "rescale_under_s", "conditional_rescale"
m = {v.name: v for v in manifest()}
v = m[STEP]
print("manifest:", len(m), "index", v.index, "parent", v.parent)
ok, log, recs = compile_check(v, "sm_90a")
print("compile_check step 62:", ok, len(recs), "kernels; spill stores", sum(r.get("spill_stores", 0) for r in recs),
      "spill loads", sum(r.get("spill_loads", 0) for r in recs), "registers", sorted({r.get("registers") for r in recs}))
print("twin matches step 62:", sw.twin_matches_step(STEP, "sm_90a"))
print("knock-out changes head dims:", sw.changed_head_dims(STEP, f"{STEP}~no_rescale_under_s"))
a = sw.sass_by_kernel(sw.sass(STEP, "sm_90a"))
b = sw.sass_by_kernel(sw.sass(PARENT, "sm_90a"))
ko = sw.sass_by_kernel(sw.sass(STEP, "sm_90a", {"FA_RESCALE_UNDER_S": 0}, twin=True))
print("kernels: step 62", len(a), "step 61", len(b), "knock-out", len(ko), "; the same names:", set(a) == set(b) == set(ko))
same = sorted(k for k in a if a[k] == b.get(k))
print("step 62's kernels equal to step 61's:", len(same), "; changed:", len(a) - len(same))
for k in sorted(set(a) - set(same)):
    print(f"  changed {k[:110]}... {len(a[k].splitlines())} SASS lines against {len(b[k].splitlines())}")
print("knock-out kernels equal to step 61's:", sum(ko[k] == b.get(k) for k in ko), "of", len(ko))
fp16 = {"FA_SASS_FP16_ONLY": "1"}
for name, text in (("step 61", sw.sass(PARENT, "sm_90a", fp16)), ("step 62", sw.sass(STEP, "sm_90a", fp16))):
    kernels = sw.sass_by_kernel(text)
    for label, pick, d in (("D = 128 ping-pong (kind 0, static list)", lambda k: "Li128ELN2fa14HopperTileKindE0ELb0E" in k, 128),
                           ("D = 64 counter's tile (kind 4)", lambda k: "Li64ELN2fa14HopperTileKindE4ELb1E" in k, 64)):
        ks = [k for k in kernels if pick(k)]
        if not ks:
            print(name, label, "no kernel matched"); continue
        per, _ = sass_mix.shortest_path(sass_mix.parse(kernels[ks[0]]), d)
        print(f"{name} {label}: {per} instructions a warp per 128 keys on the shortest path ({len(ks)} kernels matched)")
