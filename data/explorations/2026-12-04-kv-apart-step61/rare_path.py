"""Exploration (issue 46), call 8: inputs on which a row's running max rises by far more than 2^8 after the first key
tiles, so that the lazy max moves and the rare rescale path runs (the 380-case grid's random inputs never take it).
K's keys from RISE_AT on are scaled by 6: their scores have six times the spread, and a row's max jumps by about 20
in natural-log units (about 29 in the exponent's base 2) at that tile. Each configuration of EXP_CONFIGS runs every
shape once, output poisoned with NaN first; the error is against lab.measure.check.reference (fp32 from the upcast
inputs) and the bar is lab.measure.check.tolerance from SDPA's own error on the same inputs, as the grid's cases.
A form that never rescales (d3) must fail here: that is what shows the inputs take the rare path.

    EXP_CONFIGS=... python rare_path.py
"""
import math
import sys
import pathlib

import torch
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "2026-11-28-kv-apart-d128"))
import exp  # noqa: E402  (its CONFIGS from EXP_CONFIGS, and built())
from lab.measure import check  # noqa: E402

RISE_AT = 1000  # a key index inside the eighth 128-key tile, so the jump lands mid-tile
SHAPES = [(2, 4, 2048, 128, False), (2, 4, 2048, 128, True), (1, 8, 4096, 128, False), (1, 8, 4096, 128, True),
          (2, 4, 1500, 128, True)]
kernels = exp.built()
torch.manual_seed(0)
for B, H, S, D, causal in SHAPES:
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3))
    k[:, :, RISE_AT:] *= 6
    ref = check.reference(q, k, v, causal, None)
    sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=causal).float()
    tol = check.tolerance((sdpa - ref).abs().max().item(), "fp16")
    line = f"B{B} H{H} S{S} D{D}{' causal' if causal else ''}: tolerance {tol:.4f};"
    for label, attn in kernels.items():
        out = torch.full_like(q, float("nan"))
        attn.launch(q, k, v, out, causal, None)
        torch.cuda.synchronize()
        err = (out.float() - ref).abs().max().item()
        ok = math.isfinite(err) and err <= tol
        line += f" {label} {err:.4f} {'pass' if ok else 'FAIL'};"
    print(line, flush=True)
