"""Peers for decode (issue 50): what a user would call for one to eight new queries against a K/V cache,
in lab.kernels.decode's layouts. A peer binds a call outside timing (views, masks) and returns a launch
whose output is (B, q_len, H, D); a case it cannot take is a reason in one line, never a silent skip
(Peer.unsupported_reason, with the decode call's arguments).

SDPA (`DecodeSdpaPeer`, a backend forced as lab.measure.peers.SdpaPeer does) takes the caches as they
are, heads moved by a view: a batch of one length (every sequence at the cache's full length) runs with
no mask for one query, and with torch's lower-right causal bias for several (the bottom-right alignment
of lab.kernels.decode); mixed lengths run with the boolean mask written out, which the flash backend does
not take. A paged cache is not taken: SDPA reads no block table, and gathering the pages first would be
a copy the timing does not show.
"""

from __future__ import annotations

from dataclasses import dataclass

# The decode peers issue 50 names that are not measured, and why (the report's decode section lists them; a run
# records them in decode.json): facts of this code and of the peers' packages, not of a run.
NOT_WIRED = {
    "flex_attention": "not wired for decode: a call needs a mask of each sequence's length, the bottom-right "
                      "causal mask for several queries and, for a paged cache, the block table read in the mask "
                      "(torch's paged attention for flex is experimental), each shape a compilation",
    "FlashAttention-3 (flash_attn_with_kvcache)": "the pinned wheel (lab.measure.fa3) reaches FA3 through two "
                      "forward handlers, of q, k, v and of packed sequences (cu_seqlens), neither with cache lengths "
                      "or a block table, though the library holds those paths "
                      "(data/explorations/2026-11-28-fa3-ffi-handlers); a one-length unpaged call through the first "
                      "is not wired",
    "FlashInfer (decode)": "flashinfer-python is not importable on the GPU hosts used so far (the prefill peer "
                           "flashinfer is recorded absent for the same reason), and its decode wrappers are not wired",
}

from lab.kernels.decode import check_inputs
from lab.measure.peers import Peer, SdpaPeer


@dataclass
class DecodeSdpaPeer(Peer):
    backend: str  # lab.measure.peers.SdpaPeer's: flash, efficient, cudnn, math or default

    @property
    def name(self) -> str:
        return f"sdpa_{self.backend}"

    def context(self):
        return SdpaPeer(self.backend).context()

    def bind(self, q, k_cache, v_cache, cache_lens, block_table=None, scale: float | None = None):
        """The launch for this call (ValueError where the peer does not take it)."""
        import torch
        import torch.nn.functional as F

        check_inputs(q, k_cache, v_cache, cache_lens, block_table)
        if block_table is not None:
            raise ValueError(f"{self.name} reads contiguous caches only (no block table); gathering the pages "
                             "first would be a copy the timing does not show")
        B, q_len, H, D = q.shape
        S = k_cache.shape[1]
        lens = cache_lens.tolist()
        qh, kh, vh = q.transpose(1, 2), k_cache.transpose(1, 2), v_cache.transpose(1, 2)  # (B, heads, tokens, D)
        kw = {"enable_gqa": True} if k_cache.shape[2] != H else {}
        if all(n == S for n in lens):
            if q_len == 1:
                mask = None
            else:
                from torch.nn.attention.bias import causal_lower_right

                mask = causal_lower_right(q_len, S)
        else:
            keys = torch.arange(S, device=q.device)
            last = torch.tensor(lens, device=q.device)[:, None] - q_len + torch.arange(q_len, device=q.device)[None]
            mask = (keys[None, None, :] <= last[:, :, None])[:, None]  # (B, 1, q_len, S): bottom-right per sequence

        def launch():
            return F.scaled_dot_product_attention(qh, kh, vh, attn_mask=mask, scale=scale, **kw).transpose(1, 2)

        return launch
