"""The problem an attention kernel solves: (B, H, S, D), whether it is causal, how many K/V heads
there are and the element type.

The one home for a shape's text forms: parsing `B,H,S,D` / `B,H,S,D,causal` (the command line,
the manifest's `judged_at`, the notebooks) and writing it back, as an id, a label or a spec.

    >>> s = Shape.parse("4,16,4096,64,causal")
    >>> s.id, str(s), s.tuple_label, s.spec
    ('B4-H16-S4096-D64-causal', '(4, 16, 4096, 64) causal', '(4, 16, 4096, 64, causal)', '4,16,4096,64,causal')

The inputs real models run (issue 22) add two optional words: `kvN`, N K/V heads shared by the H
query heads (grouped-query attention; kv1 is multi-query), with SDPA's `enable_gqa` mapping (query
head h reads K/V head h // (H / N)), and the element type `fp16` or `bf16`. A shape without them
is what every step of the ladder takes (fp16, as many K/V heads as query heads) and reads, prints
and records exactly as before the words existed (a run record's 5-element list):

    >>> m = Shape.parse("4,32,2048,128,causal,kv8,bf16")
    >>> m.id, str(m), m.spec
    ('B4-H32-S2048-D128-causal-kv8-bf16', '(4, 32, 2048, 128) causal, 8 K/V heads, bf16', '4,32,2048,128,causal,kv8,bf16')
    >>> m.astuple()        # as run records store it: the 5 elements, then H_kv and the dtype
    (4, 32, 2048, 128, True, 8, 'bf16')
"""

from __future__ import annotations

from dataclasses import dataclass

FORM = ("B,H,S,D[,causal][,kvN][,fp16|bf16]: causal (the word), then kvN (N K/V heads, a divisor of H; "
        "default H), then the element type (default fp16), in that order")

# The element types a shape may name: the short name (specs, the manifest's `dtypes`, ids) -> torch's
# name (tensors, the `dtype` column of samples.parquet, which has said "float16" since the first run).
DTYPES = {"fp16": "float16", "bf16": "bfloat16"}
DEFAULT_DTYPE = "fp16"
DTYPE_BYTES = {"fp16": 2, "bf16": 2}
# How an implementation's K/V heads may relate to the query heads (the manifest's `kv_heads`): "same"
# (H_kv = H only, every step before issue 22) or "grouped" (any H_kv that divides H, MQA included).
KV_LAYOUTS = ("same", "grouped")


def dtype_name(dtype) -> str:
    """The short name ("fp16", "bf16") of a short name, a torch name ("float16") or a torch dtype;
    ValueError naming the known ones otherwise."""
    text = str(dtype).removeprefix("torch.")
    for short, long in DTYPES.items():
        if text in (short, long):
            return short
    raise ValueError(f"element type {dtype!r}: expected one of {', '.join(DTYPES)} (torch: "
                     f"{', '.join(DTYPES.values())})")


@dataclass(frozen=True)
class Shape:
    B: int
    H: int
    S: int
    D: int
    causal: bool
    H_kv: int | None = None  # K/V heads; None (or H) = as many as query heads
    dtype: str = DEFAULT_DTYPE  # "fp16" or "bf16" (torch's names are accepted and stored short)

    def __post_init__(self):
        # One canonical form, so that a shape written with and without its defaults is one key
        # (Shape(4, 16, 512, 64, False) == Shape(4, 16, 512, 64, False, 16, "float16")).
        for name in ("B", "H", "S", "D"):
            object.__setattr__(self, name, int(getattr(self, name)))
        object.__setattr__(self, "causal", bool(self.causal))
        object.__setattr__(self, "H_kv", self.H if self.H_kv is None else int(self.H_kv))
        object.__setattr__(self, "dtype", dtype_name(self.dtype))
        # (H < 1 is left to the callers' own rule: RunParams and check_inputs name B, H and S together)
        if self.H >= 1 and (self.H_kv < 1 or self.H % self.H_kv):
            raise ValueError(f"shape ({self.B}, {self.H}, {self.S}, {self.D}): the K/V head count H_kv = {self.H_kv} "
                             f"must be at least 1 and divide the query heads H = {self.H}")

    # --- what the inputs are -------------------------------------------------------------------

    @property
    def plain(self) -> bool:
        """fp16 with as many K/V heads as query heads: what every step takes (and every shape was
        before issue 22), written without the extra words everywhere."""
        return self.dtype == DEFAULT_DTYPE and self.H_kv == self.H

    @property
    def group(self) -> int:
        """Query heads per K/V head (H / H_kv): 1 for multi-head attention, H for multi-query."""
        return self.H // self.H_kv if self.H_kv else 0

    @property
    def kv_layout(self) -> str:
        """What an implementation must take for these K/V heads (KV_LAYOUTS)."""
        return "same" if self.H_kv == self.H else "grouped"

    @property
    def torch_dtype_name(self) -> str:
        """'float16' or 'bfloat16' (the samples' dtype column; getattr(torch, it) is the dtype)."""
        return DTYPES[self.dtype]

    def torch_dtype(self):
        import torch

        return getattr(torch, self.torch_dtype_name)

    @property
    def q_shape(self) -> tuple[int, int, int, int]:
        """(B, H, S, D): Q's and O's shape."""
        return self.B, self.H, self.S, self.D

    @property
    def kv_shape(self) -> tuple[int, int, int, int]:
        """(B, H_kv, S, D): K's and V's shape."""
        return self.B, self.H_kv, self.S, self.D

    @property
    def io_bytes(self) -> int:
        """The bytes a forward call moves at the least: Q, K and V read once and O written once (what the
        report's DRAM traffic is measured against)."""
        (b, h, s, d), (_, h_kv, _, _) = self.q_shape, self.kv_shape
        return DTYPE_BYTES[self.dtype] * 2 * s * d * b * (h + h_kv)

    def random_inputs(self, device: str = "cuda", outputs: bool = False) -> tuple:
        """(q, k, v), or (q, k, v, o) with `outputs`, drawn from torch's global generator: q and o of
        q_shape, k and v of kv_shape, all of the shape's dtype. Every stage that makes inputs from a
        shape (timing, profile, sanitizer, cross-validation) makes them here, so that none of them
        gives K/V H heads or fp16 where the shape says otherwise."""
        import torch

        dtype = self.torch_dtype()
        shapes = (self.q_shape, self.kv_shape, self.kv_shape) + ((self.q_shape,) if outputs else ())
        return tuple(torch.randn(s, device=device, dtype=dtype) for s in shapes)

    @property
    def input_words(self) -> list[str]:
        """'kvN' where H_kv differs from H, the dtype where it is not fp16 (spec and id order); none
        for a plain shape."""
        return ([f"kv{self.H_kv}"] if self.H_kv != self.H else []) + ([self.dtype] if self.dtype != DEFAULT_DTYPE else [])

    # --- text forms ----------------------------------------------------------------------------

    @property
    def id(self) -> str:
        """'B4-H16-S4096-D64-full' (-kv8, -bf16 where they apply): a file-name-safe key (shapes.json,
        ncu file names)."""
        base = f"B{self.B}-H{self.H}-S{self.S}-D{self.D}-{'causal' if self.causal else 'full'}"
        return "-".join([base, *self.input_words])

    def __str__(self) -> str:
        base = f"({self.B}, {self.H}, {self.S}, {self.D}) {'causal' if self.causal else 'non-causal'}"
        extra = []
        if self.H_kv != self.H:
            extra.append(f"{self.H_kv} K/V head" + ("s" if self.H_kv != 1 else ""))
        if self.dtype != DEFAULT_DTYPE:
            extra.append(self.dtype)
        return ", ".join([base, *extra])

    @property
    def tuple_label(self) -> str:
        """'(4, 16, 4096, 64)' or '(4, 16, 4096, 64, causal)' (', kv8, bf16' where they apply)."""
        words = (["causal"] if self.causal else []) + self.input_words
        return f"({self.B}, {self.H}, {self.S}, {self.D}" + "".join(f", {w}" for w in words) + ")"

    @property
    def spec(self) -> str:
        """'4,16,4096,64' or '4,16,4096,64,causal' (',kv8,bf16' where they apply): the form `parse` reads."""
        words = (["causal"] if self.causal else []) + self.input_words
        return ",".join([f"{self.B},{self.H},{self.S},{self.D}", *words])

    @property
    def dims(self) -> tuple[int, int, int, int]:
        return self.B, self.H, self.S, self.D

    def astuple(self) -> tuple:
        """(B, H, S, D, causal), as run records store a shape; (B, H, S, D, causal, H_kv, dtype)
        where the inputs are not plain fp16 multi-head ones (records before issue 22 hold only the
        first form, and still read back as the same shapes)."""
        base = (self.B, self.H, self.S, self.D, self.causal)
        return base if self.plain else (*base, self.H_kv, self.dtype)

    @classmethod
    def of(cls, value) -> "Shape":
        """A Shape from a Shape, a (B, H, S, D[, causal[, H_kv[, dtype]]]) sequence (a run record's
        list) or a spec."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        parts = tuple(value)
        if not 4 <= len(parts) <= 7:
            raise ValueError(f"shape {value!r}: expected (B, H, S, D[, causal[, H_kv[, dtype]]])")
        return cls(*(int(p) for p in parts[:4]), causal=bool(parts[4]) if len(parts) > 4 else False,
                   H_kv=None if len(parts) < 6 or parts[5] is None else int(parts[5]),
                   dtype=parts[6] if len(parts) > 6 else DEFAULT_DTYPE)

    @classmethod
    def from_row(cls, row) -> "Shape":
        """The shape of a table row (a dict, a pandas row or itertuples() tuple) with B, H, S, D,
        causal and, in tables written since issue 22, H_kv and dtype (absent or empty: H and fp16)."""
        get = row.get if hasattr(row, "get") else lambda k, d=None: getattr(row, k, d)

        def given(x):
            return x is not None and x == x and x != ""  # NaN != NaN: an empty cell of an older table

        causal = get("causal")
        causal = causal.strip().lower() in ("true", "1", "1.0") if isinstance(causal, str) else bool(causal)
        H_kv, dtype = get("H_kv"), get("dtype")
        return cls(int(get("B")), int(get("H")), int(get("S")), int(get("D")), causal,
                   H_kv=int(H_kv) if given(H_kv) else None, dtype=dtype if given(dtype) else DEFAULT_DTYPE)

    @classmethod
    def parse(cls, text: str) -> "Shape":
        """'B,H,S,D' then, in this order and each at most once, 'causal', 'kvN' and 'fp16' or 'bf16';
        anything else raises a ValueError naming the form (or, for kvN, the divisor rule)."""
        parts = [p.strip() for p in str(text).split(",") if p.strip()]
        if len(parts) < 4:
            raise ValueError(f"shape {text!r}: {len(parts)} of the 4 numbers B,H,S,D; expected {FORM}")
        for field, value in zip("BHSD", parts[:4]):
            if not value.isdigit():
                raise ValueError(f"shape {text!r}: {field} = {value!r} is not a whole number; expected {FORM}")
        words = parts[4:]
        causal = bool(words) and words[0] == "causal"
        words = words[1:] if causal else words
        H_kv = None
        if words and words[0].startswith("kv") and words[0][2:].isdigit():
            H_kv, words = int(words[0][2:]), words[1:]
        dtype = DEFAULT_DTYPE
        if words and words[0] in DTYPES:
            dtype, words = words[0], words[1:]
        if words:
            raise ValueError(f"shape {text!r}: word {words[0]!r} is not taken there; expected {FORM}")
        return cls(*(int(p) for p in parts[:4]), causal=causal, H_kv=H_kv, dtype=dtype)


def is_spec(text: str) -> bool:
    """Whether `text` is a shape `Shape.parse` reads."""
    try:
        Shape.parse(text)
    except ValueError:
        return False
    return True


def not_taken(what: str, dtypes, kv_heads: str, dtype, H: int, H_kv: int, source: str = "its manifest") -> str:
    """Why an implementation `what` (e.g. "variant 'tma'") that takes the element types `dtypes`
    and the K/V layout `kv_heads` (KV_LAYOUTS) cannot take inputs of `dtype` with H query and H_kv
    K/V heads; "" when it can. The one wording of the rule: check_inputs raises it, the pipeline
    records it for every implementation it leaves out of a shape ("not taken")."""
    dtype = dtype_name(dtype)
    if dtype not in dtypes:
        names = " and ".join(DTYPES[d] for d in dtypes)
        return f"{what} takes {names} only ({source} dtypes); got {DTYPES[dtype]}"
    if H_kv != H and kv_heads != "grouped":
        return (f"{what} takes as many K/V heads as query heads only ({source} kv_heads = \"{kv_heads}\"); "
                f"got {H_kv} K/V head{'s' if H_kv != 1 else ''} for {H} query heads")
    return ""
