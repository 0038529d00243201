"""paired.py with each sample's recorded round (runs from 5620c21 on): per replicate, the rounds both
rows sampled; per round, log(median of the base's samples / median of the step's); the replicate's
estimate is the median over those rounds; a t interval over the replicates (df = R - 1).
    python data/explorations/2026-11-26-cold-drift/paired_by_round.py RUN_ID [IMPL BASE]"""
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

rid = sys.argv[1]
impl, base = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else ("longest_first_queue", "sdpa_cudnn")
df = pd.read_parquet(Path(__file__).resolve().parent / "inputs" / f"{rid}.parquet")  # from git history: inputs/README.md
df = df[(df.dtype == "bfloat16") & ~df.throttled.astype(bool)]


def t_ci(x):
    x = np.array(x)
    h = stats.t.ppf(.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
    return f"{np.exp(x.mean()):.3f}x [{np.exp(x.mean() - h):.3f}, {np.exp(x.mean() + h):.3f}]"


for key, m in df.groupby(["B", "H", "S", "D", "H_kv", "mode"]):
    med, paired, common = [], [], []
    for r, g in m.groupby("replicate"):
        a, b = g[g.impl == impl], g[g.impl == base]
        med.append(np.log(b.latency_us.median() / a.latency_us.median()))
        ra, rb = a.groupby("round").latency_us.median(), b.groupby("round").latency_us.median()
        both = ra.index.intersection(rb.index)
        paired.append(float(np.median(np.log(rb[both] / ra[both]))))
        common.append(len(both))
    print(f"{key}: ratio of medians {t_ci(med)}   paired by round {t_ci(paired)}   common rounds {common}")
