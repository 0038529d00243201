import hashlib, re, sys
from lab.kernels import switches as sw
for name, arch in (("mma_sync", "sm_80"), ("ftz_exp2", "sm_90a"), ("portable_ftz_exp2", "sm_80"), ("finite_max_d64", "sm_90a"),
                   ("one_loop_causal_short_d64", "sm_90a"), ("two_m_tiles", "sm_80"), ("conditional_rescale", "sm_90a"),
                   ("lazy_rescale", "sm_80")):
    k = sw.sass_by_kernel(sw.sass(name, arch))
    h = hashlib.sha1("\n".join(f"{n}\n{k[n]}" for n in sorted(k)).encode()).hexdigest()
    print(name, arch, h)
