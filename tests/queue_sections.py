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
