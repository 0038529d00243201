"""Step 60's CPU checks (SASS only): which kernels change against step 59, spills, the twin, the knock-out."""
import re

from lab.kernels import switches as sw
from lab.kernels.build import compile_check
from lab.kernels.manifest import manifest

STEP, PARENT = "one_loop_causal_short_d64", "queue_overlap_d64"
m = {v.name: v for v in manifest()}
v = m[STEP]
print("manifest:", len(m), "index", v.index, "parent", v.parent)
ok, log, recs = compile_check(v, "sm_90a")
print("compile_check step 60:", ok, len(recs), "kernels; spill stores", sum(r.get("spill_stores", 0) for r in recs),
      "spill loads", sum(r.get("spill_loads", 0) for r in recs), "registers", sorted({r.get("registers") for r in recs}))
ok, log, recs = compile_check(v, "sm_90a", defines={"FA_ONE_LOOP_CAUSAL_SHORT_D64": 0}, twin=True)
print("compile_check twin FA_ONE_LOOP_CAUSAL_SHORT_D64=0:", ok, len(recs), "kernels; spills",
      sum(r.get("spill_stores", 0) + r.get("spill_loads", 0) for r in recs))
print("twin matches step 60:", sw.twin_matches_step(STEP, "sm_90a"))
print("knock-out changes head dims:", sw.changed_head_dims(STEP, f"{STEP}~no_one_loop_causal_short_d64"))
a = sw.sass_by_kernel(sw.sass(STEP, "sm_90a"))
b = sw.sass_by_kernel(sw.sass(PARENT, "sm_90a"))
ko = sw.sass_by_kernel(sw.sass(STEP, "sm_90a", {"FA_ONE_LOOP_CAUSAL_SHORT_D64": 0}, twin=True))


def as_step59(name: str) -> tuple[str, bool]:
    """Step 60's kernel name without its last template argument (ONE_LOOP), and that argument: attention_fwd<Elem, D,
    KIND, FROM_QUEUE, ONE_LOOP> mangles its two bools as ELb<0|1>ELb<0|1>EEEv, step 59's one as ELb<0|1>EEEv."""
    m = ONE_LOOP_ARG.search(name)
    return name[:m.start()] + f"ELb{m.group(1)}EEEv" + name[m.end():], m.group(2) == "1"


ONE_LOOP_ARG = re.compile(r"ELb([01])ELb([01])EEEv")
print("kernels: step 60", len(a), "step 59", len(b), "knock-out", len(ko))
one_loop = {k: as_step59(k)[0] for k in a if as_step59(k)[1]}
rest = {as_step59(k)[0]: k for k in a if not as_step59(k)[1]}
print("step 60's kernels without ONE_LOOP:", len(rest), "- equal to step 59's:",
      sum(a[k60] == b.get(k59) for k59, k60 in rest.items()), "; the names match step 59's:", set(rest) == set(b))
print("step 60's ONE_LOOP kernels:", len(one_loop))
for k, k59 in sorted(one_loop.items()):
    print(f"  {k[:100]}... {len(a[k].splitlines())} SASS lines, step 59's same kernel {len(b[k59].splitlines())}")
ko59 = {as_step59(k)[0]: k for k in ko if not as_step59(k)[1]}
print("knock-out: ONE_LOOP kernels", sum(as_step59(k)[1] for k in ko), "; kernels equal to step 59's:",
      sum(ko[k] == b.get(k59) for k59, k in ko59.items()), "of", len(ko))
