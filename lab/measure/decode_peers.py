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

flex_attention (`DecodeFlexPeer`) takes the same views, compiled as the prefill peer is
(lab.measure.peers.FlexAttentionPeer.compiled: one specialised graph a shape), with a block mask of each
sequence's length and, for several queries, the bottom-right causal mask: the key blocks past a sequence's
end are skipped, not computed and masked. A paged cache is not taken either (torch's paged attention for
flex, torch.nn.attention.experimental._paged_attention, is experimental and rewrites the cache's layout).

`decode_peer(name)` gives a peer by its recorded name (sdpa_<backend>, flex_attention).
"""

from __future__ import annotations

from dataclasses import dataclass

# The decode peers issue 50 names that are not measured, and why (the report's decode section lists them; a run
# records them in decode.json): facts of this code and of the peers' packages, not of a run.
NOT_WIRED = {
    "FlashAttention-3 (flash_attn_with_kvcache)": "the pinned wheel (lab.measure.fa3) reaches FA3 through two "
                      "forward handlers, of q, k, v and of packed sequences (cu_seqlens), neither with cache lengths "
                      "or a block table, though the library holds those paths "
                      "(data/explorations/2026-11-28-fa3-ffi-handlers), and it is built without FA3's split-KV and "
                      "GQA packing (its own messages: \"This flash attention build does not support splits.\", "
                      "\"This build does not support pack_gqa.\"): a one-length unpaged call through the first would "
                      "run FA3 without the two ideas its decode path rests on, not what flash_attn_with_kvcache gives "
                      "a user, so it is not wired",
    "FlashInfer (decode)": "flashinfer-python is not importable on the GPU hosts used so far (the prefill peer "
                           "flashinfer is recorded absent for the same reason), and its decode wrappers are not wired",
}

from lab.kernels.decode import check_inputs
from lab.measure.peers import FLEX, FlexAttentionPeer, Peer, SdpaPeer, gqa


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


def _bottom_right(lens, q_len: int):
    """flex_attention's mask_mod for a batch of lengths `lens` (a tensor on the call's device): query i of sequence
    b sees key j where j <= lens[b] - q_len + i (lab.kernels.decode's bottom-right alignment), which also keeps
    every key past the sequence's end out."""
    def visible(b, h, q_idx, kv_idx):
        return kv_idx <= lens[b] - q_len + q_idx

    return visible


@dataclass
class DecodeFlexPeer(Peer):
    """flex_attention on a contiguous cache: the heads moved by views, the block mask built in bind (outside timing)
    from the call's lengths. `compiled` False runs flex_attention eagerly (its reference path: the CPU tests)."""

    name: str = FLEX
    compiled: bool = True

    def bind(self, q, k_cache, v_cache, cache_lens, block_table=None, scale: float | None = None):
        """The launch for this call (ValueError where the peer does not take it)."""
        import torch
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention

        check_inputs(q, k_cache, v_cache, cache_lens, block_table)
        if block_table is not None:
            raise ValueError(f"{self.name} reads contiguous caches only (no block table): torch's paged attention "
                             "for flex is experimental, and gathering the pages first would be a copy the timing "
                             "does not show")
        B, q_len, H, D = q.shape
        S = k_cache.shape[1]
        lens = cache_lens.to(device=q.device, dtype=torch.int32)
        mask = create_block_mask(_bottom_right(lens, q_len), B, None, q_len, S, device=q.device)
        qh, kh, vh = q.transpose(1, 2), k_cache.transpose(1, 2), v_cache.transpose(1, 2)  # (B, heads, tokens, D)
        fn, kw = FlexAttentionPeer.compiled() if self.compiled else flex_attention, gqa(qh, kh)

        def launch():
            return fn(qh, kh, vh, block_mask=mask, scale=scale, **kw).transpose(1, 2)

        return launch


def decode_peer(name: str) -> Peer:
    """A decode peer by the name a run records: sdpa_<backend> or flex_attention."""
    if name == FLEX:
        return DecodeFlexPeer()
    if name.startswith("sdpa_"):
        return DecodeSdpaPeer(name[len("sdpa_"):])
    raise ValueError(f"unknown decode peer {name!r}: sdpa_<backend> or {FLEX}")
