"""The problem a decode kernel solves (issue 50): each of B sequences brings `q_len` new queries (1, or
up to 8 with speculative decoding) that attend to its K/V cache of `cache_len` tokens, the new tokens'
keys and values already written at the cache's end (a serving stack appends them before attention).

Layouts (FlashAttention's and FlashInfer's, what serving stacks hand over; heads last but one):

    q, out     (B, q_len, H, D)
    k, v cache (B, S_max, H_kv, D)                      contiguous, or paged:
               (pages, page_size, H_kv, D) + block_table (B, pages a sequence may hold), int32:
               token t of sequence b is at page block_table[b, t // page_size], slot t % page_size
    cache_lens (B,), int32: the valid tokens of each sequence, its new ones included

The new queries attend causally with the mask aligned to the end of their sequence (bottom-right,
as FlashAttention's kvcache kernels do): query i of sequence b sees keys 0 .. cache_lens[b] - q_len + i.
Query head h reads K/V head h // (H / H_kv) (grouped-query attention; H_kv = 1 is multi-query).

    >>> s = DecodeShape.parse("8,32,8,128,8192,q4,mixed,page64")
    >>> s.id, s.spec
    ('decode-B8-H32-kv8-D128-L8192-q4-mixed-page64-bf16', '8,32,8,128,8192,q4,mixed,page64,bf16')
    >>> s.cache_lens()[:3]          # mixed: from cache_len down to cache_len / 8, evenly
    [8192, 7168, 6144]

`check_inputs` is the one home of what a decode call accepts: every violation is a ValueError that
names the constraint.
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.kernels.shape import DTYPE_BYTES, DTYPES, dtype_name

MAX_Q_LEN = 8  # speculative decoding's new queries a step, at most
PAGE_SIZES = (16, 32, 64, 128, 256)  # vLLM's pages hold 16 tokens; FlashInfer's and FA3's up to 256
MIXED_SHORTEST = 8  # a mixed batch's lengths run evenly from cache_len down to cache_len / this
FORM = ("B,H,H_kv,D,cache_len[,qN][,mixed][,pageP][,fp16|bf16]: B sequences, H query heads, H_kv K/V heads (a "
        f"divisor of H), head dim D, cache_len tokens a sequence; qN new queries (1 to {MAX_Q_LEN}, default 1); "
        f"mixed: lengths from cache_len down to cache_len / {MIXED_SHORTEST}; pageP: a paged cache of P-token pages "
        f"({', '.join(map(str, PAGE_SIZES))}); the element type (default bf16)")


@dataclass(frozen=True)
class DecodeShape:
    B: int
    H: int
    H_kv: int
    D: int
    cache_len: int  # the longest sequence's tokens (every sequence's, unless mixed)
    q_len: int = 1
    mixed: bool = False
    page_size: int | None = None  # None: one contiguous cache of cache_len tokens a sequence
    dtype: str = "bf16"

    def __post_init__(self):
        for name in ("B", "H", "H_kv", "D", "cache_len", "q_len"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"decode shape: {name} must be a positive integer, got {getattr(self, name)!r}")
        if self.H % self.H_kv:
            raise ValueError(f"decode shape: H_kv={self.H_kv} must divide H={self.H} (each K/V head serves "
                             "H / H_kv query heads)")
        if self.q_len > MAX_Q_LEN:
            raise ValueError(f"decode shape: q_len={self.q_len} new queries; at most {MAX_Q_LEN}")
        if self.cache_len < self.q_len * (MIXED_SHORTEST if self.mixed else 1):
            raise ValueError(f"decode shape: cache_len={self.cache_len} must hold the q_len={self.q_len} new tokens "
                             + (f"in its shortest sequence (cache_len / {MIXED_SHORTEST})" if self.mixed else ""))
        if self.page_size is not None and self.page_size not in PAGE_SIZES:
            raise ValueError(f"decode shape: page size {self.page_size}; one of {', '.join(map(str, PAGE_SIZES))}")
        object.__setattr__(self, "dtype", dtype_name(self.dtype))

    # -- what it holds -------------------------------------------------------------------------

    @property
    def group(self) -> int:
        """Query heads a K/V head serves."""
        return self.H // self.H_kv

    def cache_lens(self) -> list[int]:
        """Each sequence's valid tokens: cache_len for all, or (mixed) evenly from cache_len down to
        cache_len / MIXED_SHORTEST, longest first: one rule, so a shape names its lengths exactly."""
        if not self.mixed or self.B == 1:
            return [self.cache_len] * self.B
        shortest = self.cache_len // MIXED_SHORTEST
        return [self.cache_len - (b * (self.cache_len - shortest)) // (self.B - 1) for b in range(self.B)]

    @property
    def pages_per_sequence(self) -> int:
        return -(-self.cache_len // self.page_size) if self.page_size else 0

    @property
    def cache_bytes(self) -> int:
        """K and V as allocated: B x cache_len slots (whole pages where paged) of H_kv x D elements each."""
        slots = self.B * (self.pages_per_sequence * self.page_size if self.page_size else self.cache_len)
        return 2 * slots * self.H_kv * self.D * DTYPE_BYTES[self.dtype]

    def bytes_moved(self) -> int:
        """What a decode call must move at the least: the valid K/V read once, Q read, O written (the
        block table and lengths aside): the numerator of achieved bandwidth."""
        kv = 2 * sum(self.cache_lens()) * self.H_kv * self.D
        qo = 2 * self.B * self.q_len * self.H * self.D
        return (kv + qo) * DTYPE_BYTES[self.dtype]

    def flops(self) -> int:
        """4 D flops per (query, visible key) pair a head (QK^T and PV), the bottom-right mask applied."""
        pairs = sum(self.q_len * n - self.q_len * (self.q_len - 1) // 2 for n in self.cache_lens())
        return 4 * self.D * self.H * pairs

    # -- text forms ----------------------------------------------------------------------------

    @property
    def words(self) -> list[str]:
        return ([f"q{self.q_len}"] if self.q_len != 1 else []) + (["mixed"] if self.mixed else []) \
            + ([f"page{self.page_size}"] if self.page_size else [])

    @property
    def spec(self) -> str:
        return ",".join([str(x) for x in (self.B, self.H, self.H_kv, self.D, self.cache_len)] + self.words
                        + [self.dtype])

    @property
    def id(self) -> str:
        return "-".join([f"decode-B{self.B}-H{self.H}-kv{self.H_kv}-D{self.D}-L{self.cache_len}", *self.words,
                         self.dtype])

    def __str__(self) -> str:
        extra = [f"{self.q_len} new queries" if self.q_len > 1 else "1 new query",
                 "mixed lengths" if self.mixed else "", f"{self.page_size}-token pages" if self.page_size else ""]
        return (f"decode (B {self.B}, {self.H} heads, {self.H_kv} K/V heads, D {self.D}, {self.cache_len} tokens), "
                + ", ".join(e for e in extra if e) + f", {self.dtype}")

    @classmethod
    def parse(cls, text: str) -> "DecodeShape":
        """A spec (FORM) -> DecodeShape; ValueError naming the field and value at fault."""
        parts = [p.strip() for p in str(text).split(",") if p.strip()]
        if len(parts) < 5:
            raise ValueError(f"decode shape {text!r}: expected {FORM}")
        fields = {}
        for name, part in zip(("B", "H", "H_kv", "D", "cache_len"), parts[:5]):
            try:
                fields[name] = int(part)
            except ValueError:
                raise ValueError(f"decode shape {text!r}: {name} must be an integer, got {part!r}") from None
        for word in parts[5:]:
            if word == "mixed":
                fields["mixed"] = True
            elif word in DTYPES or word in DTYPES.values():
                fields["dtype"] = word
            elif word[:1] == "q" and word[1:].isdigit():
                fields["q_len"] = int(word[1:])
            elif word.startswith("page") and word[4:].isdigit():
                fields["page_size"] = int(word[4:])
            else:
                raise ValueError(f"decode shape {text!r}: unknown word {word!r}; expected {FORM}")
        return cls(**fields)

    # -- inputs --------------------------------------------------------------------------------

    def random_inputs(self, device: str = "cuda", generator=None, seed: int | None = None) -> dict:
        """The call's arguments: q, k_cache, v_cache (random in the shape's dtype), cache_lens (int32) and
        block_table (int32, or None unpaged), and out (of q's shape). A paged cache's pages are handed out
        in a shuffled order, so that a kernel that ignored the block table would read the wrong tokens.

        Drawn on `generator`'s device and moved to `device`, else from a generator on `device` seeded with
        `seed`, else from `device`'s default one. Drawn on the host and moved, a 4.3 GB cache took 21.3 s, and
        the decode set's 13 GB most of its 68 s of timing; on an H200 it takes 0.008 s
        (data/explorations/2026-12-01-decode-set-cost)."""
        import torch

        dtype = getattr(torch, DTYPES[self.dtype])
        if generator is None and seed is not None:
            generator = torch.Generator(device=device).manual_seed(seed)
        where = generator.device if generator is not None else torch.device(device)

        def randn(*shape):
            return torch.randn(*shape, generator=generator, device=where, dtype=torch.float32).to(device, dtype)

        q = randn(self.B, self.q_len, self.H, self.D)
        lens = torch.tensor(self.cache_lens(), dtype=torch.int32, device=device)
        if self.page_size is None:
            k, v, table = (randn(self.B, self.cache_len, self.H_kv, self.D),
                           randn(self.B, self.cache_len, self.H_kv, self.D), None)
        else:
            pages = self.B * self.pages_per_sequence
            k, v = (randn(pages, self.page_size, self.H_kv, self.D), randn(pages, self.page_size, self.H_kv, self.D))
            order = torch.randperm(pages, generator=generator, device=where)
            table = order.view(self.B, self.pages_per_sequence).to(device, torch.int32)
        return {"q": q, "k_cache": k, "v_cache": v, "cache_lens": lens, "block_table": table,
                "out": torch.empty_like(q)}


def check_inputs(q, k_cache, v_cache, cache_lens, block_table=None, out=None) -> None:
    """What a decode call takes (the module's layouts); ValueError naming the first constraint broken.
    Reads cache_lens and block_table on the host (a synchronisation: validation, not the timed launch)."""
    import torch

    if q.dim() != 4 or k_cache.dim() != 4 or v_cache.dim() != 4:
        raise ValueError(f"q must be (B, q_len, H, D) and each cache (B, S_max, H_kv, D) or (pages, page_size, "
                         f"H_kv, D): got {q.dim()}, {k_cache.dim()} and {v_cache.dim()} dimensions")
    if not (q.dtype == k_cache.dtype == v_cache.dtype) or q.dtype not in (torch.float16, torch.bfloat16):
        raise ValueError(f"q, k_cache and v_cache must share one element type, float16 or bfloat16: got "
                         f"{q.dtype}, {k_cache.dtype}, {v_cache.dtype}")
    if k_cache.shape != v_cache.shape:
        raise ValueError(f"k_cache {tuple(k_cache.shape)} and v_cache {tuple(v_cache.shape)} must have one shape")
    B, q_len, H, D = q.shape
    H_kv = k_cache.shape[2]
    if k_cache.shape[3] != D:
        raise ValueError(f"head dim: q has D = {D}, the cache {k_cache.shape[3]}")
    if H % H_kv:
        raise ValueError(f"the cache's {H_kv} K/V heads must divide q's {H} heads")
    if not 1 <= q_len <= MAX_Q_LEN:
        raise ValueError(f"q_len = {q_len} new queries a sequence: 1 to {MAX_Q_LEN}")
    if not all(t.is_contiguous() for t in (q, k_cache, v_cache)):
        raise ValueError("q, k_cache and v_cache must be contiguous")
    if out is not None and (out.shape != q.shape or out.dtype != q.dtype):
        raise ValueError(f"out must be q's shape and type {tuple(q.shape)} {q.dtype}: got {tuple(out.shape)} {out.dtype}")
    if cache_lens.dim() != 1 or cache_lens.shape[0] != B or cache_lens.dtype != torch.int32:
        raise ValueError(f"cache_lens must be ({B},) int32, one length a sequence: got {tuple(cache_lens.shape)} "
                         f"{cache_lens.dtype}")
    lens = cache_lens.tolist()
    if block_table is None:
        capacity = k_cache.shape[1]
        if k_cache.shape[0] != B:
            raise ValueError(f"an unpaged cache holds one row a sequence: {k_cache.shape[0]} rows for B = {B}")
    else:
        page_size, pages = k_cache.shape[1], k_cache.shape[0]
        if page_size not in PAGE_SIZES:
            raise ValueError(f"page size {page_size} tokens (the cache's dimension 1): one of "
                             f"{', '.join(map(str, PAGE_SIZES))}")
        if block_table.dim() != 2 or block_table.shape[0] != B or block_table.dtype != torch.int32:
            raise ValueError(f"block_table must be ({B}, pages a sequence) int32: got {tuple(block_table.shape)} "
                             f"{block_table.dtype}")
        capacity = block_table.shape[1] * page_size
        table = block_table.tolist()
        for b, n in enumerate(lens):
            used = table[b][:-(-n // page_size)] if n > 0 else []
            if bad := [p for p in used if not 0 <= p < pages]:
                raise ValueError(f"block_table[{b}] names page {bad[0]}, outside the cache's {pages} pages")
    for b, n in enumerate(lens):
        if not q_len <= n <= capacity:
            raise ValueError(f"cache_lens[{b}] = {n}: must hold the {q_len} new token(s) and fit the cache's "
                             f"{capacity} slots a sequence")
