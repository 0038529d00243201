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


# --- the grid a decode kernel (or peer) is checked on ------------------------------------------------

def decode_grid() -> list:
    """Small decode cases covering what a decode kernel must get right: 1, 2, 4 and 8 new queries; one
    length and mixed ones (odd among them); the minimum cache (as many tokens as new queries); 16- and
    64-token pages, with a length one past a page; multi-head, grouped (2, 4, 8 heads a K/V head) and
    multi-query K/V; D = 64 and 128; bf16 and fp16; caches of thousands of tokens (a kernel that splits
    the keys across CTAs splits them); more packed query rows than one CTA holds (128: Falcon-like
    heads with 2 new queries; a wide mixed batch of 32 sequences); more works than a wave of CTAs holds. Each case
    is its own seed (the grid's position)."""
    from lab.kernels.decode import DecodeShape

    specs = ["2,4,4,64,1,fp16", "3,8,2,128,37", "2,8,1,64,129,q2", "4,32,8,128,300,q4,mixed",
             "3,28,4,128,256,q8,mixed,fp16", "2,4,2,64,65,page16", "3,32,8,128,1000,q4,mixed,page64",
             "1,71,1,64,513,page16", "2,16,2,128,8,q8", "5,12,12,64,97,mixed,fp16",
             # Long enough that a kernel splitting the keys across CTAs (step 38) splits them, the
             # shorter sequence of the mixed pair ending inside a later chunk:
             "2,8,2,128,3000,q4,mixed,page16", "1,32,8,64,5000,q2",
             "2,64,1,64,700,q2,mixed",
             # A wide mixed batch whose row blocks a step's own rule splits into fewer chunks than the
             # TMA tile's rule would (step 56: 2 against 3): the launch must bind the workspace its
             # caller sized from the same plan.
             "32,71,1,64,4096,mixed",
             # More (sequence, K/V head) pairs than a wave of CTAs holds (640: 2 CTAs an SM on 132 SMs hold
             # 264): a persistent step's CTA walks several, its ring running on from one to the next (step 72).
             "80,32,8,128,700,q2,mixed"]
    return [DecodeShape.parse(s) for s in specs]


def check_decode_case(name: str, call, shape, index: int, device: str = "cuda", cache_lens=None) -> dict:
    """Run `call(q, k_cache, v_cache, cache_lens, block_table, out)` twice on fresh random inputs (seed:
    the case's index), each time into an output poisoned with NaN, and judge it against the fp32
    reference: every element within lab.measure.check.tolerance of SDPA's own error (math backend, the
    mask written out, on the same inputs: DecodeSdpaPeer), finite, the inputs unchanged, both calls
    bit-identical. `cache_lens` (a list, each at most the shape's cache_len) replaces the shape's lengths.
    Never raises for a failing call: its error is the result."""
    import torch

    from lab.measure.check import tolerance
    from lab.measure.decode_peers import DecodeSdpaPeer

    x = shape.random_inputs(device=device, seed=1000 + index)
    if cache_lens is not None:
        if len(cache_lens) != shape.B or not all(shape.q_len <= n <= shape.cache_len for n in cache_lens):
            raise ValueError(f"cache_lens: {shape.B} lengths from q_len={shape.q_len} to cache_len={shape.cache_len}")
        x["cache_lens"] = torch.tensor(cache_lens, dtype=torch.int32, device=device)
    args = (x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"])
    ref = reference(*args)
    flat = dict(zip(("q", "k_cache", "v_cache"), (x["q"], *_contiguous_cache(x))))
    peer = DecodeSdpaPeer("math")
    with peer.context():
        sdpa = peer.bind(flat["q"], flat["k_cache"], flat["v_cache"], x["cache_lens"])()
    sdpa_err = (sdpa.float() - ref).abs().max().item()
    out = dict(impl=name, case=shape.id, sdpa_max_abs_err=sdpa_err, tolerance=tolerance(sdpa_err, shape.dtype))
    snapshot = [t.clone() for t in args if t is not None]
    try:
        outs = [torch.full_like(x["q"], float("nan")) for _ in range(2)]
        for o in outs:
            call(*args, o)
        if x["q"].is_cuda:
            torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - a failing kernel is a result, not a crash
        return {**out, "max_abs_err": float("nan"), "passed": False, "error": f"{type(exc).__name__}: {exc}"}
    finite = bool(torch.isfinite(outs[0]).all().item())
    err = (outs[0].float() - ref).abs().max().item() if finite else float("inf")
    unchanged = all(torch.equal(a, b) for a, b in zip(snapshot, (t for t in args if t is not None)))
    same = torch.equal(outs[0].view(torch.uint8), outs[1].view(torch.uint8))
    return {**out, "max_abs_err": err, "finite": finite, "inputs_unchanged": unchanged, "deterministic": same,
            "passed": finite and err <= out["tolerance"] and unchanged and same, "error": ""}


def _contiguous_cache(x: dict):
    """(k, v) as contiguous (B, cache_len, H_kv, D) caches: a paged cache's pages gathered in block-table
    order (what SDPA, which reads no block table, is given to measure its error on the same tokens)."""
    import torch

    if x["block_table"] is None:
        return x["k_cache"], x["v_cache"]
    B, lens = x["q"].shape[0], x["cache_lens"].tolist()
    n = x["block_table"].shape[1] * x["k_cache"].shape[1]
    k = torch.zeros(B, n, *x["k_cache"].shape[2:], dtype=x["k_cache"].dtype, device=x["k_cache"].device)
    v = torch.zeros_like(k)
    for b, length in enumerate(lens):
        k[b, :length], v[b, :length] = valid_kv(x["k_cache"], x["v_cache"], length, b, x["block_table"])
    return k, v


def sdpa_call(backend: str = "math"):
    """SDPA as a decode call (check_decode_case's signature): a paged cache gathered first (outside what
    it checks), the result copied into `out`."""
    from lab.measure.decode_peers import DecodeSdpaPeer

    peer = DecodeSdpaPeer(backend)

    def call(q, k_cache, v_cache, cache_lens, block_table, out):
        k, v = _contiguous_cache({"q": q, "k_cache": k_cache, "v_cache": v_cache, "cache_lens": cache_lens,
                                  "block_table": block_table})
        with peer.context():
            out.copy_(peer.bind(q, k, v, cache_lens)())

    return call
