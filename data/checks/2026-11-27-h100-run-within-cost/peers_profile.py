"""The peers' Nsight Compute durations profiled in one ncu process a shape (run 20261127T232414Z-97d9b4e)
against one process a peer (run 20261127T200255Z-9d5873b: its profile.csv copied from git history into
inputs/, inputs/history.json), H100s of one model.

    python data/checks/2026-11-27-h100-run-within-cost/peers_profile.py > data/checks/2026-11-27-h100-run-within-cost/peers_profile.txt
"""
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[3]
KEY = ["impl", "B", "H", "S", "D", "causal"]
PEERS = ["sdpa_flash", "sdpa_cudnn", "flex_attention", "flash_attn3"]

NEW = REPO / "data/runs/20261127T232414Z-97d9b4e/profile.csv"  # in inputs/ since the run left the tree
new = pd.read_csv(NEW if NEW.is_file() else Path(__file__).resolve().parent / "inputs/20261127T232414Z-97d9b4e/profile.csv")
old = pd.read_csv(Path(__file__).resolve().parent / "inputs/20261127T200255Z-9d5873b/profile.csv")
both = new[new.impl.isin(PEERS)][KEY + ["ok", "n_kernels", "duration"]].merge(
    old[old.impl.isin(PEERS)][KEY + ["duration"]], on=KEY, suffixes=("_together", "_alone"))
both["ratio"] = both.duration_together / both.duration_alone
print(both.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
print(f"together / alone: {both.ratio.min():.3f} to {both.ratio.max():.3f} over {len(both)} (peer, shape); "
      f"all ok: {bool(both.ok.all())}")
