"""Call 11's SASS checks (no GPU): FA_EXP_ONE_LOOP_SHORT_D64 at 0 leaves step 59 as it is; 1 and 2 change only the
short D = 64 tile's kernels (HopperTileKind 0, fp16 and bf16, from the counter and the static list), spill-free.
Output: one_loop_sass.txt. Run from a tree with step 59 and one_loop_short_d64.patch applied:

    PYTHONPATH=. python data/explorations/2026-12-02-launch-by-launch/one_loop_sass.py
"""
from lab.kernels import switches as sw
from lab.kernels.manifest import manifest
from lab.kernels.build import compile_check

v = {x.name: x for x in manifest()}["queue_overlap_d64"]
base = sw.sass_by_kernel(sw.sass("queue_overlap_d64", "sm_90a"))
for val in (0, 1, 2):
    d = {"FA_EXP_ONE_LOOP_SHORT_D64": val}
    for twin in (False, True):
        ok, log, recs = compile_check(v, "sm_90a", defines=d if twin else None, twin=twin) if val == 0 or twin else (None, None, None)
        if ok is None:
            continue
        print(f"value {val} {'twin' if twin else 'step'}: ok={ok}, {len(recs)} kernels, spill bytes",
              sum(r.get("spill_stores", 0) + r.get("spill_loads", 0) for r in recs),
              "registers", sorted({r.get("registers") for r in recs}))
    got = sw.sass_by_kernel(sw.sass("queue_overlap_d64", "sm_90a", d, twin=True))
    diff = [k for k in got if got[k] != base.get(k)]
    kinds = sorted({(("bf16" if "bfloat16" in k else "fp16"), k.split("HopperTileKindE")[1][:5]) for k in diff})
    print(f"value {val}: twin kernels differing from step 59's: {len(diff)} of {len(got)}: {kinds}")
