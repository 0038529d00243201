"""What the cold mode's L2 flush costs the launch after it, read from a committed run (no GPU): per decode shape and
implementation, the cold median over the hot one (µs), beside the bytes the call must move and whether its K/V cache
streams from HBM (more than four L2s, decode.json's `streams`), and the hot call's DRAM rate. If the cold launch
paid the flush's dirty lines (a buffer of twice the L2 overwritten right before it), the excess is near an L2's
worth of write-back at the DRAM's rate wherever the launch keeps the DRAM busy, whatever the cache size, and
smaller where the launch leaves the DRAM idle (it absorbs the write-back) or moves less than an L2.

    PYTHONPATH=. python data/explorations/2026-12-04-cold-flush-writeback/writeback.py [RUN_ID [CSV]]
"""
import json
import sys

import pandas as pd

run = sys.argv[1] if len(sys.argv) > 1 else "20261204T174912Z-d6d98b0"
folder = f"data/runs/{run}"
dec = json.load(open(f"{folder}/decode.json"))
env = json.load(open(f"{folder}/env.json"))
samples = pd.read_parquet(f"{folder}/decode_samples.parquet")
samples = samples[~samples["throttled"]]
keys = ["B", "H", "H_kv", "D", "cache_len", "q_len", "mixed", "page_size", "dtype"]
med = samples.groupby(keys + ["impl", "mode"])["latency_us"].median().unstack("mode")
rows = {(r["impl"], *(r[k] for k in keys)): r for r in dec["rows"] if r["mode"] == "hot"}
l2 = dec["l2_bytes"]
print(f"run {run}: {env.get('gpu')}, L2 {l2 / 2**20:.0f} MiB, copy {dec['copy']['gbps']:.0f} GB/s; "
      f"cold flush: {env.get('cold_flush', 'not recorded (a buffer of twice the L2 overwritten)')}")
out = []
for idx, m in med.iterrows():
    shape = dict(zip(keys, idx[:-1]))
    impl = idx[-1]
    r = rows.get((impl, *idx[:-1]))
    if r is None or pd.isna(m.get("cold")) or pd.isna(m.get("hot")):
        continue
    sid = (f"decode-B{shape['B']}-H{shape['H']}-kv{shape['H_kv']}-D{shape['D']}-L{shape['cache_len']}"
           + (f"-q{shape['q_len']}" if shape["q_len"] > 1 else "") + ("-mixed" if shape["mixed"] else "")
           + (f"-page{shape['page_size']}" if shape["page_size"] else "") + f"-{shape['dtype']}")
    label = (f"{shape['B']},{shape['H']},{shape['H_kv']},{shape['D']},{shape['cache_len']}"
             + (f",q{shape['q_len']}" if shape["q_len"] > 1 else "") + (",mixed" if shape["mixed"] else "")
             + (f",page{shape['page_size']}" if shape["page_size"] else ""))
    streams = dec["streams"][sid]
    out.append(dict(shape=label, impl=impl, streams=streams, MB=r["bytes_moved"] / 1e6, hot_us=m["hot"],
                    cold_us=m["cold"], excess_us=m["cold"] - m["hot"], hot_gbps=r["bytes_moved"] / (m["hot"] * 1e3)))
t = pd.DataFrame(out)
pd.set_option("display.width", 200)
pd.set_option("display.max_rows", 500)
shown = {dec["end"], "sdpa_cudnn", "sdpa_flash", "decode_group_cta"}
print(f"The branch's end ({dec['end']}), the first decode step and two peers (every implementation: writeback.csv):")
print(t[t["impl"].isin(shown)].round(1).to_string(index=False))
t.round(2).to_csv(sys.argv[2] if len(sys.argv) > 2 else "/dev/null", index=False)
print()
busy = t[t["streams"] & (t["hot_gbps"] > 3000)]
idle = t[t["streams"] & (t["hot_gbps"] < 2000)]
small = t[~t["streams"]]
for name, part in (("streams from HBM, hot above 3,000 GB/s", busy), ("streams from HBM, hot below 2,000 GB/s", idle),
                   ("fits the L2 four times over or less (streams false)", small)):
    if len(part):
        print(f"{name}: {len(part)} rows, cold - hot {part['excess_us'].min():.1f} to {part['excess_us'].max():.1f} µs "
              f"(median {part['excess_us'].median():.1f})")
print(f"an L2 ({l2 / 1e6:.1f} MB) at the copy's rate (read plus write, {dec['copy']['gbps']:.0f} GB/s): "
      f"{l2 / (dec['copy']['gbps'] * 1e3):.1f} µs")
