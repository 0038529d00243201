import pickle, sys
from lab.kernels import switches as sw
t = sw.sass("conditional_rescale", "sm_90a", {"FA_EXP_VOTE_AFTER_S": "1", "FA_EXP_LAZY_SHIFT": "3"}, twin=True)
pickle.dump(sw.sass_by_kernel(t), open("/tmp/va3_kernels.pkl", "wb"))
print("va3 kernels", len(sw.sass_by_kernel(t)))
