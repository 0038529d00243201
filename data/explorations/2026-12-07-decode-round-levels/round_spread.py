"""The decode rows of recorded runs whose rounds disagree: for each (shape, implementation, mode), the medians of its
rounds, the lowest and the highest, and their ratio; rows of at least SPREAD (1.02) first. No GPU: it reads the runs'
decode_samples.parquet.

    python round_spread.py RUN [RUN ...] > round_spread.txt
"""
import sys

import pandas as pd

SPREAD = 1.02
KEY = ["B", "H", "H_kv", "D", "cache_len", "q_len", "mixed", "page_size", "impl", "mode"]


def unthrottled_samples(run: str) -> pd.DataFrame:
    d = pd.read_parquet(f"data/runs/{run}/decode_samples.parquet")
    return d[~d["throttled"]]


def round_medians(d: pd.DataFrame) -> pd.Series:
    """Each row's rounds' medians, indexed by KEY and round."""
    return d.groupby(KEY + ["round"]).latency_us.median()


def spread(run: str) -> pd.DataFrame:
    rounds = round_medians(unthrottled_samples(run))
    g = rounds.groupby(level=list(range(len(KEY)))).agg(["min", "median", "max", "count"]).reset_index()
    g["spread"] = g["max"] / g["min"]
    return g.sort_values("spread", ascending=False)


if __name__ == "__main__":
    for run in sys.argv[1:]:
        g = spread(run)
        wide = g[g.spread >= SPREAD]
        print(f"## {run}: {len(wide)} of {len(g)} rows whose rounds' medians spread {SPREAD}x or more")
        print(wide.rename(columns={"min": "lowest_round_us", "median": "median_round_us", "max": "highest_round_us",
                                   "count": "rounds"}).round(3).to_string(index=False))
        print()
