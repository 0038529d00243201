"""What fewer samples would have given the decode rows of run 20261128T153425Z-53b8db1: each row's first n
samples (its interleave's order) against all of them (python decode_min_samples.py > decode_min_samples.txt)."""
import numpy as np
import pandas as pd

from lab.measure import stats

RUN = "data/runs/20261128T153425Z-53b8db1"
d = pd.read_parquet(f"{RUN}/decode_samples.parquet")
keys = ["B", "H", "H_kv", "D", "cache_len", "q_len", "mixed", "page_size", "dtype", "impl", "mode"]
out = []
for k, g in d.groupby(keys):
    lat = g.sort_values("sample").latency_us.to_numpy()
    full = np.median(lat)
    for n in (10, 20, 30):
        lo, hi = stats.replicated_median_ci({0: list(lat[:n])})
        out.append(dict(mode=k[-1], n=n, rel=np.median(lat[:n]) / full - 1, width=(hi - lo) / np.median(lat[:n]),
                        inside=lo <= full <= hi))
o = pd.DataFrame(out)
print(f"{len(d)} samples, {o.groupby(['mode', 'n']).size().iloc[0]} rows a mode; rel: the first n samples' median over "
      "all samples' median - 1; width: their 95 % CI's width over their median; inside: the CI holds all samples' median")
print(o.groupby(["mode", "n"]).agg(max_abs_rel=("rel", lambda x: np.abs(x).max()),
                                   p95_abs_rel=("rel", lambda x: np.quantile(np.abs(x), 0.95)),
                                   median_width=("width", "median"), max_width=("width", "max"),
                                   inside=("inside", "mean")).round(4).to_string())
