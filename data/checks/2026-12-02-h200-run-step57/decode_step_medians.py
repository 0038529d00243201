"""Steps 55-57's median decode latency (us) at every decode shape and mode of a run, from its
decode_samples.parquet, with step 56 over 55 and step 57 over 56 (> 1: the later step faster); runs as argv.

    python data/checks/2026-12-02-h200-run-step57/decode_step_medians.py data/runs/<run> [data/runs/<run> ...]
"""
import sys

import pandas as pd

KEYS = ["B", "H", "H_kv", "D", "cache_len", "q_len", "mixed", "page_size", "mode"]
STEPS = ["wide_groups_in_row_blocks", "row_blocks_fill_one_wave", "tensor_maps_prefetched"]
for run in sys.argv[1:]:
    d = pd.read_parquet(f"{run}/decode_samples.parquet")
    m = d.groupby(KEYS + ["impl"]).latency_us.median().unstack("impl")
    n = d[d.impl == STEPS[0]].groupby(KEYS).size()
    cols = [c for c in STEPS if c in m]
    if "row_blocks_fill_one_wave" in m:
        m["56/55"] = m["wide_groups_in_row_blocks"] / m["row_blocks_fill_one_wave"]
    if "tensor_maps_prefetched" in m:
        m["57/56"] = m["row_blocks_fill_one_wave"] / m["tensor_maps_prefetched"]
    m["samples"] = n
    print(run)
    print(m[cols + [c for c in ("56/55", "57/56", "samples") if c in m]].round(3).to_string())
