"""Step 59's CPU checks (SASS only)."""
import re
from lab.kernels import switches as sw
from lab.kernels.manifest import manifest
from lab.kernels.build import compile_check

ANON = re.compile(r"_GLOBAL__N__[0-9a-f]+_\w+?_cu_[0-9a-f]+")
m = manifest()
m = {v.name: v for v in m}
v59 = m["queue_overlap_d64"]
print("manifest:", len(m), "index", v59.index, "parent", v59.parent)
ok, log, recs = compile_check(v59, "sm_90a")
print("compile_check step 59:", ok, len(recs), "kernels; spill stores", sum(r.get("spill_stores", 0) for r in recs),
      "spill loads", sum(r.get("spill_loads", 0) for r in recs), "registers", sorted({r.get("registers") for r in recs}))
ok, log, recs = compile_check(v59, "sm_90a", defines={"FA_QUEUE_OVERLAP_D64": 0}, twin=True)
print("compile_check twin FA_QUEUE_OVERLAP_D64=0:", ok, len(recs), "kernels; spills",
      sum(r.get("spill_stores", 0) + r.get("spill_loads", 0) for r in recs))
print("twin matches step 59:", sw.twin_matches_step("queue_overlap_d64", "sm_90a"))
print("knock-out changes head dims:", sw.changed_head_dims("queue_overlap_d64", "queue_overlap_d64~no_queue_overlap_d64"))
print("wgmma_overlap knock-out changes head dims:", sw.changed_head_dims("queue_overlap_d64", "queue_overlap_d64~no_wgmma_overlap"))
a = sw.sass_by_kernel(sw.sass("queue_overlap_d64", "sm_90a"))
b = sw.sass_by_kernel(sw.sass("finite_max_d64", "sm_90a"))
ko = sw.sass_by_kernel(sw.sass("queue_overlap_d64", "sm_90a", {"FA_QUEUE_OVERLAP_D64": 0}, twin=True))
print(len(a), len(b), len(ko))
diff = [k for k in a if a[k] != b.get(k)]
print("step 59 kernels differing from step 58's:", len(diff))
for k in diff: print("  ", k)
print("knock-out kernels equal to step 58's:", sum(ko[k] == b.get(k) for k in ko), "of", len(ko))
