"""The counter's sections worked out apart from fa/tile_queue.cuh, for the tests that check its host rules: how many
query heads a section holds and how many the last one keeps."""
import math


def section_heads(B, H, H_kv, S, D, budget, elem=2):
    """K/V heads whose K and V fit `budget` bytes (at least one), split evenly into sections, times the query heads a
    K/V head serves."""
    kv_heads = B * H_kv
    fit = max(1, min(kv_heads, budget // (2 * S * D * elem)))
    return math.ceil(kv_heads / math.ceil(kv_heads / fit)) * (H // H_kv)


def last_section_heads(B, H, heads):
    """The query heads the last of the sections of `heads` query heads keeps."""
    return B * H - (math.ceil(B * H / heads) - 1) * heads


def takes_counter(B, H, H_kv, S, D, budget, tiles_per_cta, sms, BR=128):
    """Whether a launch of one CTA an SM takes the counter: the last section's BR-row tiles at least tiles_per_cta
    for each CTA, min(the launch's tiles, sms)."""
    m_blocks = math.ceil(S / BR)
    last = last_section_heads(B, H, section_heads(B, H, H_kv, S, D, budget))
    return last * m_blocks >= tiles_per_cta * min(m_blocks * B * H, sms)
