"""Offline, from recorded runs: step 35 over cuDNN at the bf16 models shapes, two estimators per
replicate: the ratio of medians (the report's), and the median over rounds of the ratio of the two
rows' samples taken in the same turn of the round robin (sample i of each: both rows take the same
turn sizes there, one sample a turn cold from 56c1d74 on at launches of a millisecond and more).
Either way, a t interval over the three replicates. Where the GPU's clock state changes part way
through a shape (Llama-3-70B S = 8192 on an H100: 10 % slower once only the fast rows are left), a
median sits on the edge between two states and moves with a sample's more or less; the paired
ratio compares the two rows in the same state.
    python data/explorations/2026-11-26-cold-drift/paired.py RUN_ID...
"""
import pandas as pd, numpy as np, sys
from pathlib import Path
from scipy import stats
for rid in sys.argv[1:]:
    df=pd.read_parquet(Path(__file__).resolve().parent/'inputs'/f'{rid}.parquet')  # copied from git history: inputs/README.md
    df=df[(df.dtype=='bfloat16')]
    for key,m in df.groupby(['B','H','S','D','H_kv','mode']):
        per_med=[];per_pair=[]
        for r in range(3):
            a=m[(m.impl=='longest_first_queue')&(m.replicate==r)].sort_values('sample').latency_us.values
            b=m[(m.impl=='sdpa_cudnn')&(m.replicate==r)].sort_values('sample').latency_us.values
            n=min(len(a),len(b))
            per_med.append(np.log(np.median(b)/np.median(a)))
            per_pair.append(np.log(np.median(b[:n]/a[:n])))
        def ci(x):
            x=np.array(x); se=x.std(ddof=1)/np.sqrt(3); h=stats.t.ppf(.975,2)*se
            return f"{np.exp(x.mean()):.3f} [{np.exp(x.mean()-h):.3f},{np.exp(x.mean()+h):.3f}]"
        print(rid[-12:], key, 'medians', ci(per_med), ' paired', ci(per_pair))
