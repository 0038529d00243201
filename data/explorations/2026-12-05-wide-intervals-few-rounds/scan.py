import numpy as np, sys, time
from lab.measure import records
from lab.measure.stats import bootstrap as B, replicated as Rp
from lab.report.load import RunData
from lab.report import branches
run=sys.argv[1]; robust=sys.argv[2]=='robust'
def iqr_var(draws):
    q1,q3=np.percentile(draws,[25,75]); return float(((q3-q1)/1.3489795)**2)
if robust:
    Rp.median_var=lambda d,n,rng: iqr_var(B._bootstrap_medians(d,n,rng))
    Rp.log_median_var=lambda x,n,rng: iqr_var(np.log(B._bootstrap_medians(x,n,rng)))
d=RunData(records.RunRecord.open(run))
step=branches.arch_specific_end(d)
out=[]
for impl in d.impls():
  for base in ['flash_attn3','sdpa_cudnn']:
    if impl==base: continue
    if impl!=step: continue
    for sh in d.measured_shapes:
      for mode in d.modes+['sustained']:
        c=d.speedup(impl,base,sh,mode)
        if c is None: continue
        out.append((str(sh),mode,base,c.ratio,c.lo,c.hi))
import json; json.dump(out,open(f'/tmp/scan_{run}_{sys.argv[2]}.json','w'))
print(len(out))
