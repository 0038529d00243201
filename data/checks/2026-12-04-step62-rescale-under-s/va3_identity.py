import pickle
from lab.kernels import switches as sw
va3 = pickle.load(open("/tmp/va3_kernels.pkl", "rb"))
s62 = sw.sass_by_kernel(sw.sass("rescale_under_s", "sm_90a"))
print("kernels", len(va3), len(s62), "same names", set(va3) == set(s62))
same = [k for k in s62 if s62[k] == va3.get(k)]
print("step 62's kernels byte-identical to the exploration's va3:", len(same), "of", len(s62))
for k in s62:
    if s62[k] != va3.get(k):
        print("  differs", k[:120], len(s62[k].splitlines()), len((va3.get(k) or "").splitlines()))
