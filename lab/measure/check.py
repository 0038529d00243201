"""Correctness: every variant against an fp32 reference, on fresh random inputs.

For one case (B, H, S, D, causal, scale, and the inputs real models run: H_kv K/V heads and the
element type) the inputs are drawn fresh from a seeded normal distribution (never zeros), the
reference is computed in fp32 from the upcast inputs, K and V expanded to one head per query head
by repeat_interleave (SDPA's enable_gqa semantics, materialised: never the kernels' own index
mapping), and SDPA's own error against that reference, in the case's element type, sets the bar:
a variant passes when its max abs error is at most 2x SDPA's plus a slack of two units of the
element type's roundoff at |O| = 1 (1e-3 for fp16; `tolerance`), with no NaN or Inf, its output
buffer having been filled with NaN before the call (so an element it fails to write cannot pass),
the inputs left untouched, and a second call giving a bit-identical result.

The grid's model-input cases (bf16, K/V heads shared by 2, 4, 8 and all query heads: `model_cases`)
run for the implementations that take them; a variant that does not (its library's dtypes and K/V
heads, as its manifest declares) is recorded as not taken, neither passed nor failed.

The peers other than SDPA (lab.measure.peers) are judged by the same rule through `peer_as_attn`, on
`peer_grid()`: they take no output buffer, so their own output, every element of it, is copied
into the NaN-filled one; a case a peer cannot take is recorded as unsupported, not as a failure.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass
from typing import Callable, Iterator

from lab.kernels.manifest import SUPPORTED_HEAD_DIMS as HEAD_DIMS  # the grid covers every head dim the kernels take
from lab.kernels.shape import Shape

SEQ_LENS = (1, 17, 64, 127, 128, 129, 512, 1000, 2048)
BATCH_HEADS = ((1, 1), (2, 3), (4, 16))
CUSTOM_SCALE = 0.3  # a scale far from 1/sqrt(D), on a few cases
ERROR_FACTOR, ERROR_SLACK = 2.0, 1e-3  # the fp16 rule: 2x SDPA's error, plus 1e-3
# Unit roundoff of each element type (half the spacing of the numbers just above 1: 2^-(mantissa
# bits + 1)): fp16 keeps 10 mantissa bits, bf16 7. The fp16 slack, 1e-3, is two fp16 units at
# |O| = 1 (2 x 2^-11 = 9.8e-4, rounded up), the size of the output's own rounding; a bf16 output
# rounds 2^3 = 8 times as coarsely, so its slack is 8e-3. The other term needs no such scaling: SDPA
# runs on the case's own bf16 inputs, so its measured error already has bf16's size.
UNIT_ROUNDOFF = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8}

# The inputs real models run (issue 22): query heads per K/V head of 2, 4 and 8 and MQA (12 heads,
# one K/V head), plus group 1 in bf16 (multi-head bf16; fp16 multi-head is the grid above). Odd S
# within one tile (17) and across several (129), and across many (1000) where the mapping matters
# most (group 4, MQA); both D, causal and not; fp16 and bf16.
GQA_HEADS = ((8, 8), (8, 4), (8, 2), (16, 2), (12, 1))  # (H, H_kv): groups 1, 2, 4, 8 and 12 (MQA)
GQA_SEQ_LENS = (17, 129)
GQA_LONG = ((8, 2), (12, 1))  # also at S = 1000
BF16_SEQ_LENS = (1, 64, 127, 512, 2048)  # bf16 multi-head at (B, H) = (2, 3): short, tile edges, long
# Past the longest sequence rule a kernel has: from S = 4096 step 32 takes 192-key tiles at D = 64.
# 4096 and 4097 are not multiples of 192 (the last tile is partly masked), so every tile size's edge
# is crossed; both D, causal and not, fp16 multi-head and bf16 with 4 query heads per K/V head.
LONG_SEQ_LENS = (4096, 4097)
# Grids of many work tiles: from ten 64-row work tiles an SM (1320 on an H100's or H200's 132 SMs) and
# S < 8192, step 33 runs three CTAs per SM at D = 64, which smaller grids never reach. Each of these
# has 2048 tiles or more (ten an SM up to 204 SMs), ragged S, causal and not: fp16 multi-head at
# S = 1000, bf16 with 4 query heads per K/V head at S = 500, fp16 MQA at S = 257 (one key in the last
# tile), and fp16 at S = 4097, where the three-CTA tile replaces step 32's 192-key one; bf16 with 4 query
# heads per K/V head at S = 4097 too, whose 704 tiles of 192 rows, causal, step 52 takes from the counter.
MANY_TILE_CASES = ((8, 16, 1000, 16, "fp16"), (8, 32, 500, 8, "bf16"), (16, 32, 257, 1, "fp16"),
                   (1, 32, 4097, 32, "fp16"), (1, 32, 4097, 8, "bf16"))  # (B, H, S, H_kv, dtype), D = 64
# Causal D = 64 launches of two to three 192-row tiles an SM, where step 64 hands each CTA its second tile from the
# counter's second round mirrored: 13 heads at S = 4097 are 286 tiles, 2.5 an SM on 114 SMs and 2.17 on 132. The
# grid's other long causal cases have under two (the static pairs) or over three (the counter as it was).
MIRRORED_ROUND_CASES = ((1, 13, 4097, 13, "fp16"), (1, 13, 4097, 1, "bf16"))  # (B, H, S, H_kv, dtype), D = 64
# Causal D = 128 launches that step 65's rule sends to the counter in FA3's 32 MB sections: 24 heads at S = 4097 are
# 792 tiles of 128 rows (two sections of 12, the last 396 tiles: 3 a CTA on 132 SMs) and grouped (8 K/V heads, one
# section), which step 71 gives the older queue; 72 heads, which it leaves there (over 8 static pairs a CTA).
FA3_SECTIONS_CASES = ((1, 24, 4097, 24, "fp16"), (1, 24, 4097, 8, "bf16"), (1, 72, 4097, 72, "fp16"))  # D = 128
# The counter's causal D = 64 tile as steps 68 and 69 change it. In sections (K/V over 32 MB; 1.05 MB a head at 4097
# keys): 40 heads, two sections of 20, the last 440 tiles; 64 on 32 K/V heads, two of 32. From 2048 keys: 26 heads at
# 2049, 286 tiles, the second round mirrored (2.2 a CTA on 132 SMs, 2.5 on 114); 32 heads at 3001, 512 tiles.
COUNTER_D64_CASES = ((1, 40, 4097, 40, "fp16"), (1, 64, 4097, 32, "bf16"), (1, 26, 2049, 26, "fp16"),
                     (1, 32, 3001, 8, "bf16"))  # (B, H, S, H_kv, dtype), D = 64
# Non-causal D = 128 launches that take the counter, which step 66 gives a kernel of its own: a section of two fifths of
# an L2 of 50 MB holds about 320 128-row tiles of multi-head K/V, under the counter's four tiles a CTA, so only grouped
# calls reach it. 8 K/V heads at S = 4097 fit one section: 792 tiles, 6 a CTA on 132 SMs, 6.9 on 114.
NON_CAUSAL_COUNTER_CASES = ((1, 24, 4097, 8, "fp16"), (1, 24, 4097, 8, "bf16"))  # (B, H, S, H_kv, dtype), D = 128
# A row's max that rises late: the lazy rescale (steps 24 and 61, FlashAttention-4's conditional rescale) moves a row's
# running max only where a key tile raises it by more than 2^8, and the grid's normal inputs never do after their first
# tile, so its rescaling path would go unchecked. In these cases K's keys from `rise_at` on are RISE_FACTOR times
# larger: a row's scores there spread six times as wide and its max jumps by about 20 in natural-log units (about 29
# in base 2) inside a later tile. (B, H, S, H_kv, dtype, rise_at), both D and causal and not, and one causal D = 64
# case that takes the counter's three-warpgroup tile (step 52's overlapped loop from step 59).
RISE_FACTOR = 6.0
RISING_CASES = ((2, 4, 2048, 4, "fp16", 1000), (2, 8, 1000, 2, "bf16", 500))
RISING_COUNTER_CASE = (1, 32, 4097, 8, "bf16", 2500)  # D = 64, causal


@dataclass(frozen=True)
class Case:
    B: int
    H: int
    S: int
    D: int
    causal: bool
    scale: float | None = None
    H_kv: int | None = None  # K/V heads (None: H)
    dtype: str = "fp16"
    rise_at: int | None = None  # K's keys from here on RISE_FACTOR times larger (RISING_CASES); None: plain inputs

    def __post_init__(self):
        object.__setattr__(self, "H_kv", self.H if self.H_kv is None else int(self.H_kv))
        object.__setattr__(self, "dtype", self.shape.dtype)  # "fp16"/"bf16" whichever name it was given in

    @property
    def shape(self) -> Shape:
        """The problem (lab.kernels.shape.Shape): what an implementation is asked whether it takes."""
        return Shape(self.B, self.H, self.S, self.D, self.causal, self.H_kv, self.dtype)

    @property
    def id(self) -> str:
        """'B2H3-S17-D64-causal' (-scale0.3, then -kv2, -bf16 where they apply); also the seed's source,
        so the cases that existed before the model inputs keep their inputs."""
        s = f"B{self.B}H{self.H}-S{self.S}-D{self.D}-{'causal' if self.causal else 'full'}"
        s += f"-scale{self.scale:g}" if self.scale is not None else ""
        s += f"-rise{self.rise_at}" if self.rise_at is not None else ""
        return "-".join([s, *self.shape.input_words])

    @property
    def layout(self) -> str:
        """'MHA', 'GQA' or 'MQA' (how the correctness counts group the cases)."""
        return "MHA" if self.H_kv == self.H else "MQA" if self.H_kv == 1 else "GQA"

    @property
    def seed(self) -> int:
        return int(hashlib.sha256(self.id.encode()).hexdigest()[:8], 16)


def grid() -> list[Case]:
    """The full grid: D x S x (B, H) x causal, plus a custom scale on a few cases, long sequences
    (long_cases), grids of many work tiles (many_tile_cases), launches of two to three tiles a CTA
    (mirrored_round_cases), long causal D = 128 launches in FA3's sections (fa3_sections_cases), non-causal
    D = 128 launches from the counter (non_causal_counter_cases), steps 68's and 69's launches of the counter's causal
    D = 64 tile (counter_d64_cases), rows whose max rises late (rising_max_cases), then the model inputs."""
    cases = [
        Case(B, H, S, D, causal)
        for D in HEAD_DIMS
        for S in SEQ_LENS
        for (B, H) in BATCH_HEADS
        for causal in (False, True)
    ]
    cases += [Case(2, 3, S, D, causal, CUSTOM_SCALE) for D in HEAD_DIMS for S in (17, 129) for causal in (False, True)]
    return (cases + long_cases() + many_tile_cases() + mirrored_round_cases() + fa3_sections_cases()
            + non_causal_counter_cases() + counter_d64_cases() + rising_max_cases() + model_cases())


def _table_cases(table, D: int, causals=(True,)) -> list[Case]:
    """The cases of a (B, H, S, H_kv, dtype) table at head dim D, in each of `causals`."""
    return [Case(B, H, S, D, causal, None, H_kv, dtype) for (B, H, S, H_kv, dtype) in table for causal in causals]


def fa3_sections_cases() -> list[Case]:
    """FA3_SECTIONS_CASES, causal: launches that step 65 sends to the counter in sections of 32 MB."""
    return _table_cases(FA3_SECTIONS_CASES, 128)


def counter_d64_cases() -> list[Case]:
    """COUNTER_D64_CASES, causal: the counter's causal D = 64 tile in sections (step 68) and from 2048 keys (69)."""
    return _table_cases(COUNTER_D64_CASES, 64)


def non_causal_counter_cases() -> list[Case]:
    """NON_CAUSAL_COUNTER_CASES, non-causal: launches that take the counter's non-causal D = 128 kernel (step 66)."""
    return _table_cases(NON_CAUSAL_COUNTER_CASES, 128, (False,))


def mirrored_round_cases() -> list[Case]:
    """MIRRORED_ROUND_CASES, causal: launches whose second round of work tiles step 64 hands out mirrored."""
    return _table_cases(MIRRORED_ROUND_CASES, 64)


def rising_max_cases() -> list[Case]:
    """RISING_CASES at both D, causal and not, and RISING_COUNTER_CASE: inputs whose rows' max jumps by far more than
    2^8 in a later key tile, so that a lazy rescale's rescaling path runs."""
    cases = [Case(B, H, S, D, causal, None, H_kv, dtype, rise_at) for (B, H, S, H_kv, dtype, rise_at) in RISING_CASES
             for D in HEAD_DIMS for causal in (False, True)]
    B, H, S, H_kv, dtype, rise_at = RISING_COUNTER_CASE
    return cases + [Case(B, H, S, 64, True, None, H_kv, dtype, rise_at)]


def many_tile_cases() -> list[Case]:
    """MANY_TILE_CASES, causal and not: grids large enough for step 33's three CTAs per SM."""
    return _table_cases(MANY_TILE_CASES, 64, (False, True))


def long_cases() -> list[Case]:
    """Long sequences (LONG_SEQ_LENS), one batch of two heads each: fp16 multi-head at both lengths and
    bf16 grouped-query (8 query heads on 2 K/V heads) at the ragged one; both D, causal and not."""
    return ([Case(1, 2, S, D, causal) for D in HEAD_DIMS for S in LONG_SEQ_LENS for causal in (False, True)]
            + [Case(1, 8, LONG_SEQ_LENS[-1], D, causal, None, 2, "bf16") for D in HEAD_DIMS for causal in (False, True)])


def model_cases() -> list[Case]:
    """The inputs real models run: grouped-query and multi-query K/V heads (GQA_HEADS) at
    GQA_SEQ_LENS (GQA_LONG also at S = 1000) in fp16 and bf16 (group 1 in bf16 only), bf16
    multi-head over BF16_SEQ_LENS, and a custom scale in bf16 GQA; B = 2, both D, causal and not.
    Run only by the implementations that take them (a variant declaring fp16 with H_kv = H skips
    them all, recorded as not taken), so they cost the check stage little."""
    cases = []
    for dtype in ("fp16", "bf16"):
        for H, H_kv in GQA_HEADS:
            if dtype == "fp16" and H_kv == H:
                continue  # fp16 multi-head: the grid above
            lens = GQA_SEQ_LENS + ((1000,) if (H, H_kv) in GQA_LONG else ())
            cases += [Case(2, H, S, D, causal, None, H_kv, dtype) for D in HEAD_DIMS for S in lens
                      for causal in (False, True)]
    cases += [Case(2, 3, S, D, causal, None, 3, "bf16") for D in HEAD_DIMS for S in BF16_SEQ_LENS
              for causal in (False, True)]
    cases += [Case(2, 8, 129, D, True, CUSTOM_SCALE, 2, "bf16") for D in HEAD_DIMS]
    return cases


def small_grid() -> list[Case]:
    """A quick subset (ragged S, both head dims, causal and not) for smoke runs, with a few model
    inputs: bf16 with 4 query heads per K/V head, and fp16 MQA."""
    return ([Case(2, 3, S, D, causal) for D in HEAD_DIMS for S in (1, 17, 129) for causal in (False, True)]
            + [Case(2, 8, 129, D, causal, None, 2, "bf16") for D in HEAD_DIMS for causal in (False, True)]
            + [Case(2, 12, 17, D, True, None, 1, "fp16") for D in HEAD_DIMS])


def failed(record: dict) -> bool:
    """CaseResult.failed of a correctness.json record: ran and did not pass (a case not taken, or
    unsupported by a peer, is neither passed nor failed)."""
    return not record["passed"] and not record.get("unsupported")


def counts(results) -> dict:
    """{(dtype, layout): {"cases", "passed", "failed", "not_taken"}} over results (CaseResult or their
    records): how many checks ran, passed and failed per element type and head layout (MHA, GQA,
    MQA), and how many were not taken. The correctness counts the report and the closing notes give."""
    out: dict = {}
    for r in results:
        r = r if isinstance(r, dict) else asdict(r)
        H_kv = r.get("H_kv") or r["H"]
        layout = "MHA" if H_kv == r["H"] else "MQA" if H_kv == 1 else "GQA"
        c = out.setdefault((r.get("dtype") or "fp16", layout), {"cases": 0, "passed": 0, "failed": 0, "not_taken": 0})
        if str(r.get("unsupported") or "").startswith(NOT_TAKEN):
            c["not_taken"] += 1
        elif not r.get("unsupported"):
            c["cases"] += 1
            c["passed" if r["passed"] else "failed"] += 1
    return out


def make_inputs(case: Case, device: str = "cuda"):
    """(q, k, v) of the case: q (B, H, S, D), k and v (B, H_kv, S, D), drawn in fp32 from the case's
    seed and rounded to its element type (fp16 multi-head cases: the inputs they always had); with rise_at,
    K's keys from there on scaled by RISE_FACTOR before the rounding."""
    import torch

    gen = torch.Generator(device=device).manual_seed(case.seed)
    shape = case.shape
    dtype = shape.torch_dtype()
    q, k, v = (torch.randn(s, generator=gen, device=device, dtype=torch.float32)
               for s in (shape.q_shape, shape.kv_shape, shape.kv_shape))
    if case.rise_at is not None:
        k[:, :, case.rise_at:] *= RISE_FACTOR
    return q.to(dtype), k.to(dtype), v.to(dtype)


def expand_kv(t, H: int):
    """K or V of H_kv heads as H heads, each K/V head repeated for the H / H_kv query heads that
    share it, consecutively (repeat_interleave: SDPA's enable_gqa semantics, materialised)."""
    return t if t.shape[1] == H else t.repeat_interleave(H // t.shape[1], dim=1)


def reference(q, k, v, causal: bool, scale: float | None):
    """Attention in fp32 from the upcast inputs (fp16 or bf16), K and V expanded per query head
    (expand_kv), one (batch) slice at a time to bound memory."""
    import torch

    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    S = q.shape[2]
    mask = torch.ones(S, S, dtype=torch.bool, device=q.device).tril() if causal else None
    for b in range(q.shape[0]):
        kb, vb = expand_kv(k[b:b + 1], q.shape[1])[0], expand_kv(v[b:b + 1], q.shape[1])[0]
        scores = (q[b].float() @ kb.float().transpose(-1, -2)) * scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        out[b] = torch.softmax(scores, dim=-1) @ vb.float()
    return out


def tolerance(sdpa_err: float, dtype: str = "fp16") -> float:
    """The bar of a case: ERROR_FACTOR x SDPA's own max abs error plus the slack scaled to the element
    type's unit roundoff (the module's docstring): 2 x err + 1e-3 for fp16, 2 x err + 8e-3 for bf16."""
    return ERROR_FACTOR * sdpa_err + ERROR_SLACK * UNIT_ROUNDOFF[dtype] / UNIT_ROUNDOFF["fp16"]


@dataclass
class CaseResult:
    variant: str
    case: str
    B: int
    H: int
    S: int
    D: int
    causal: bool
    scale: float | None
    max_abs_err: float
    sdpa_max_abs_err: float
    tolerance: float
    finite: bool
    inputs_unchanged: bool
    deterministic: bool
    passed: bool
    error: str = ""
    # neither passed nor failed: a peer that cannot take the case says why; a variant that does not
    # take its dtype or K/V heads, "not taken: " and why (NOT_TAKEN)
    unsupported: str = ""
    H_kv: int | None = None  # K/V heads (records before issue 22: none, H)
    dtype: str = "fp16"

    @property
    def failed(self) -> bool:
        """Ran and did not pass (a case not taken, or unsupported by a peer, is neither)."""
        return not self.passed and not self.unsupported

    def explain(self) -> str:
        if self.unsupported.startswith(NOT_TAKEN):
            return f"{self.variant} {self.case}: {self.unsupported}"
        if self.unsupported:
            return f"{self.variant} {self.case}: unsupported ({self.unsupported})"
        if self.error:
            return f"{self.variant} {self.case}: {self.error}"
        why = []
        if not self.finite:
            why.append("NaN/Inf in output")
        if not self.max_abs_err <= self.tolerance:
            why.append(f"max abs err {self.max_abs_err:.3g} > tolerance {self.tolerance:.3g}")
        if not self.inputs_unchanged:
            why.append("inputs modified")
        if not self.deterministic:
            why.append("second call differs")
        return f"{self.variant} {self.case}: " + ("; ".join(why) or "ok")


NOT_TAKEN = "not taken: "


class ReferenceCache:
    """Inputs, fp32 reference and SDPA's error per case, computed once and shared by variants."""

    def __init__(self, max_entries: int = 4, device: str = "cuda"):
        self._entries: dict[Case, tuple] = {}
        self._max = max_entries
        self.device = device

    def get(self, case: Case):
        if case not in self._entries:
            import torch
            import torch.nn.functional as F

            if len(self._entries) >= self._max:
                self._entries.pop(next(iter(self._entries)))
            q, k, v = make_inputs(case, self.device)
            ref = reference(q, k, v, case.causal, case.scale)
            gqa = {"enable_gqa": True} if case.H_kv != case.H else {}  # (torch < 2.5 has no such argument)
            sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=case.causal, scale=case.scale, **gqa)
            sdpa_err = (sdpa.float() - ref).abs().max().item()
            self._entries[case] = (q, k, v, ref, sdpa_err)
            del sdpa
            _sync(q)
        return self._entries[case]


def _sync(t) -> None:
    import torch

    if t.is_cuda:
        torch.cuda.synchronize()


def _not_taken(attn, case: Case) -> str:
    """Why an implementation does not take the case's dtype or K/V heads (a variant, a tuned
    dispatch: their not_taken), ''; a peer answers by raising Unsupported when called."""
    ask = getattr(attn, "not_taken", None)
    return ask(case.shape) if ask is not None else ""


def check_case(name: str, attn: Callable, case: Case, refs: ReferenceCache | None = None) -> CaseResult:
    """Run one variant on one case and judge it (never raises for a kernel failure)."""
    import torch

    ids = dict(variant=name, case=case.id, B=case.B, H=case.H, S=case.S, D=case.D, causal=case.causal,
               scale=case.scale, H_kv=case.H_kv, dtype=case.dtype)
    if why := _not_taken(attn, case):  # nothing is launched, and no reference computed for it
        return CaseResult(**ids, sdpa_max_abs_err=float("nan"), tolerance=float("nan"), max_abs_err=float("nan"),
                          finite=False, inputs_unchanged=True, deterministic=False, passed=False,
                          unsupported=NOT_TAKEN + why)
    refs = refs or ReferenceCache()
    q, k, v, ref, sdpa_err = refs.get(case)
    base = dict(ids, sdpa_max_abs_err=sdpa_err, tolerance=tolerance(sdpa_err, case.dtype))
    snapshot = [t.clone() for t in (q, k, v)]
    try:
        out1 = torch.full_like(q, float("nan"))
        attn(q, k, v, is_causal=case.causal, scale=case.scale, out=out1)
        out2 = torch.full_like(q, float("nan"))
        attn(q, k, v, is_causal=case.causal, scale=case.scale, out=out2)
        _sync(q)
    except Unsupported as exc:
        return CaseResult(**base, max_abs_err=float("nan"), finite=False, inputs_unchanged=True,
                          deterministic=False, passed=False, unsupported=str(exc))
    except Exception as exc:  # noqa: BLE001 - a failing kernel is a result, not a crash
        _restore((q, k, v), snapshot)
        return CaseResult(**base, max_abs_err=float("nan"), finite=False, inputs_unchanged=False,
                          deterministic=False, passed=False, error=f"{type(exc).__name__}: {exc}")
    finite = bool(torch.isfinite(out1).all().item())
    err = (out1.float() - ref).abs().max().item() if finite else float("inf")
    unchanged = all(torch.equal(a, b) for a, b in zip(snapshot, (q, k, v)))
    if not unchanged:
        _restore((q, k, v), snapshot)
    deterministic = _bits_equal(out1, out2)
    passed = finite and err <= base["tolerance"] and unchanged and deterministic
    return CaseResult(**base, max_abs_err=err, finite=finite, inputs_unchanged=unchanged,
                      deterministic=deterministic, passed=passed)


def _restore(inputs, snapshot) -> None:
    """Put back inputs a kernel wrote: the cached inputs are shared by every kernel checked on the
    case after it, which would otherwise be judged on other inputs than the reference's."""
    for t, s in zip(inputs, snapshot):
        t.copy_(s)


def _bits_equal(a, b) -> bool:
    """Bit-identical (a NaN where the other call has the same NaN counts as equal: a deterministic
    kernel that writes NaN fails as non-finite, not as non-deterministic)."""
    import torch

    return a.shape == b.shape and bool(torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8)))


def run_grid(kernels: dict[str, Callable], cases: list[Case] | None = None,
             progress: Callable[[str], None] | None = None, device: str = "cuda",
             tick: Callable[[str], None] | None = None) -> Iterator[CaseResult]:
    """Check every kernel (a variant, or a peer through peer_as_attn) on every case; yields results
    as they come (case-major, so each reference is computed once). `tick(case)` after each case."""
    refs = ReferenceCache(device=device)
    cases = cases if cases is not None else grid()
    for i, case in enumerate(cases, 1):
        for name, attn in kernels.items():
            result = check_case(name, attn, case, refs)
            if progress and result.failed:
                progress("  FAIL " + result.explain())
            yield result
        if progress and i % 20 == 0:
            progress(f"  checked {i}/{len(cases)} cases")
        if tick is not None:
            tick(case.id)


class Unsupported(Exception):
    """Raised by an adapter for a case its implementation cannot take (recorded, not a failure)."""


def peer_as_attn(peer) -> Callable:
    """A peer (lab.measure.peers) with the variants' interface, `attn(q, k, v, is_causal=, scale=, out=)`,
    so that check_case and run_grid judge it by the same rule. A peer takes no `out`: its own
    output is converted to (B, H, S, D) and copied into the NaN-filled `out` (the same elements,
    all of them, so NaN/Inf and the error are checked on every element); a shape mismatch is an
    error rather than a broadcast. A shape the peer cannot take raises Unsupported."""

    def attn(q, k, v, is_causal: bool = False, scale: float | None = None, out=None):
        if why := peer.unsupported_reason(q, k, v, is_causal, scale):
            raise Unsupported(why)
        with peer.context():
            result = peer.output_bhsd(peer.bind(q, k, v, is_causal, scale)())
        if tuple(result.shape) != tuple(q.shape):
            raise ValueError(f"{peer.name} returned shape {tuple(result.shape)}, expected {tuple(q.shape)}")
        if out is None:
            return result
        out.copy_(result)
        return out

    return attn


def peer_grid() -> list[Case]:
    """The peers' cases: the quick grid's fp16 multi-head cases (B = 2, ragged S, both D, causal and
    not), one-request cases (B = 1, for peers wired for one request), a custom scale and
    PEER_MODEL_CASES. Smaller than the variants' grid because each new shape costs flex_attention a
    compilation; the peers are libraries, and what is checked here is this harness's wiring of them
    (layouts, causal, scale, enable_gqa and bf16)."""
    plain = [c for c in small_grid() if c.shape.plain]
    return (plain + [Case(1, 3, 129, D, causal) for D in HEAD_DIMS for causal in (False, True)]
            + [Case(2, 3, 129, 64, True, CUSTOM_SCALE)] + PEER_MODEL_CASES)


# The peers' model inputs: three cases, three compilations of flex_attention: bf16 with 4 query
# heads per K/V head at both D, causal and not, and bf16 MQA as one request (B = 1).
PEER_MODEL_CASES = [Case(2, 8, 129, 64, True, None, 2, "bf16"), Case(2, 8, 129, 128, False, None, 2, "bf16"),
                    Case(1, 12, 129, 64, True, None, 1, "bf16")]


def as_records(results) -> list[dict]:
    return [asdict(r) for r in results]
