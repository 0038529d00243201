"""Correctness of decode (issue 50): the fp32 reference a decode kernel is checked against.

For each sequence the valid keys and values are gathered from the cache (through the block table where
paged), upcast to fp32, K/V heads expanded to one per query head (check.expand_kv's mapping), and SDPA's
math computed in fp32 with the bottom-right mask written out as a boolean matrix (lab.kernels.decode:
query i of a sequence of n tokens sees keys 0 .. n - q_len + i). One sequence at a time, so the
reference's memory is one sequence's, however long the batch.
"""

from __future__ import annotations

import math

from lab.kernels.decode import check_inputs


def valid_kv(k_cache, v_cache, n: int, b: int, block_table=None):
    """(k, v) of sequence b's first n tokens, (n, H_kv, D): its row of a contiguous cache, or its pages
    in block-table order."""
    if block_table is None:
        return k_cache[b, :n], v_cache[b, :n]
    page_size = k_cache.shape[1]
    pages = block_table[b, :-(-n // page_size)].long()
    k = k_cache[pages].reshape(-1, *k_cache.shape[2:])[:n]
    v = v_cache[pages].reshape(-1, *v_cache.shape[2:])[:n]
    return k, v


def bottom_right_mask(q_len: int, n: int, device=None):
    """(q_len, n) booleans, True where query i may see key j: j <= n - q_len + i."""
    import torch

    rows = torch.arange(q_len, device=device)[:, None]
    cols = torch.arange(n, device=device)[None, :]
    return cols <= n - q_len + rows


def reference(q, k_cache, v_cache, cache_lens, block_table=None, scale: float | None = None):
    """Decode attention in fp32 (B, q_len, H, D), from the upcast inputs: SDPA (its math backend's
    definition, computed here in fp32) on each sequence's valid keys with the bottom-right mask.
    The inputs are checked first (lab.kernels.decode.check_inputs)."""
    import torch

    check_inputs(q, k_cache, v_cache, cache_lens, block_table)
    B, q_len, H, D = q.shape
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    for b, n in enumerate(cache_lens.tolist()):
        k, v = valid_kv(k_cache, v_cache, n, b, block_table)
        group = H // k.shape[1]
        k = k.float().transpose(0, 1).repeat_interleave(group, dim=0)  # (H, n, D)
        v = v.float().transpose(0, 1).repeat_interleave(group, dim=0)
        qb = q[b].float().transpose(0, 1)  # (H, q_len, D)
        mask = bottom_right_mask(q_len, n, q.device)
        o = torch.nn.functional.scaled_dot_product_attention(qb, k, v, attn_mask=mask, scale=scale)
        out[b] = o.transpose(0, 1)
    return out
