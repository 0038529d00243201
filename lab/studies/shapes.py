"""The shapes a run measures: named sets, what each set is measured with (its scope), and the
shapes the studies single out (the headline).

    canonical  S = 512, D = 64: (1, 8), (4, 16), (8, 16) causal and not, and (32, 8) non-causal
    large      (4, 16, 4096, D), D = 64 and 128, causal and not
    long       (2, 16, 8192, 128), (1, 16, 16384, 128), (16, 16, 1024, 128), causal and not
    sweep      B * S = 16384, H = 16, S from 256 to 16384, D = 64 and 128, non-causal
    models     prefill of the models in MODELS (their query heads, K/V heads and D) at S = 2048 and
               8192, causal, bf16, B * S = 8192 tokens
    models-fp16  the same in fp16 (not in the default run): what the models' bf16 rows are judged
               against (bf16 no more than 2 % slower than fp16 at the same shape)

A spec is set names joined by ',' or '+' (`canonical,large,long,sweep,models`), or explicit shapes
`B,H,S,D[,causal][,kvN][,fp16|bf16]` joined by ';' (lab.kernels.shape).
"""

from __future__ import annotations

from lab.kernels.shape import Shape

# The shape the report leads with and the studies of one kernel (A/A twin, knock-outs, factorial)
# are judged at; its D = 128 twin (where a switch or step changes D = 128 only); and the canonical
# shape reported beside it (short sequences, where launch and tail effects weigh more).
HEADLINE = Shape(4, 16, 4096, 64, False)
HEADLINE_D128 = Shape(4, 16, 4096, 128, False)
HEADLINE_CANONICAL = Shape(4, 16, 512, 64, False)

SWEEP_TOKENS = 16384  # B * S held fixed across the sweep

LONG_SHAPES = [Shape(B, 16, S, 128, c) for (B, S) in ((2, 8192), (1, 16384), (16, 1024)) for c in (False, True)]
SWEEP_S = (256, 512, 1024, 2048, 4096, 8192, 16384)

# The models whose attention the `models` set times (issue 22), the one home for their names:
# (query heads H, K/V heads H_kv, head dim D) -> the models with that attention. Llama-3-8B and
# Mistral-7B share one; GPT-2 and BERT-base have the same 12 heads of 64 (BERT's encoder attends both
# ways; the set times every model's prefill causal, as a decoder runs it).
MODELS = {
    (32, 8, 128): ("Llama-3-8B", "Mistral-7B"),
    (64, 8, 128): ("Llama-3-70B",),
    (28, 4, 128): ("Qwen2.5-7B",),
    (71, 1, 64): ("Falcon-7B",),
    (12, 12, 64): ("GPT-2", "BERT-base"),
}
MODEL_SEQ_LENS = (2048, 8192)
MODEL_DTYPE = "bf16"  # what these models are trained and served in
# Tokens per shape (B * S): B = 4 at S = 2048, 1 at S = 8192. Enough to fill the GPU: at 128-row query
# tiles a head has S / 128 tiles, so the grid has B * H * S / 128 = 64 * H work tiles, at least 768 (H =
# 12), 5.8 waves on an H100's or H200's 132 SMs (at D = 64 the sm_90a kernel's 64-row tiles, two CTAs an
# SM, give the same count of waves); Falcon's 71 heads make 34. More tokens would only lengthen the
# time the set takes (see SCOPE_CAP_S).
MODEL_TOKENS = 8192


def model_names(shape: Shape) -> tuple[str, ...]:
    """The models (MODELS) whose attention `shape` is, by its heads, K/V heads and D; () for none."""
    return MODELS.get((shape.H, shape.H_kv, shape.D), ())


# What a shape set is measured with. "ladder": every step, the knock-outs and the A/A twin, in the
# run's modes. "models": the last step of each branch, the knock-outs where their switch changes the
# kernel (and the kernel each is measured against), and the peers, in the run's modes; whatever does not
# take the shape's dtype or K/V heads is left out and recorded as not taken. "tails": the last step of
# each branch (lab.kernels.manifest.branch_ends), the headline branch end's parent (a step that acts only at
# long sequences, such as step 65, is then measured against its parent) and the peers, in the run's modes: the
# long shapes, where the early steps would take minutes. "tails-hot": the branch ends and the peers, hot only:
# the TFLOP/s-vs-S sweep. A
# shape in several sets takes the widest scope.
SET_SCOPES = {"canonical": "ladder", "large": "ladder", "long": "tails", "sweep": "tails-hot", "models": "models",
              "models-fp16": "models"}
SCOPES = ("ladder", "models", "tails", "tails-hot")  # widest first

# A scope's sample budget where it is below the run's CAP: seconds per (implementation, shape, mode)
# row, over all replicates (each replicate gets its share, as of CAP). The models set's extra wall time
# is to stay within 60 s on an H100 (issue 22). Estimated from run 20261123T080257Z-831d1d3's timing (in git history)
# stage (H200; per shape, the interleave's time is about the sum over rows of samples x their time,
# 1 ms a hot sample below 1 ms, the latency above; cold, the latency; and 2.6 s a shape besides, 1.5 s
# of it flex_attention's compilation) and its TFLOP/s at long causal shapes (D = 128 / 64: sm_90a end
# 550 / 380, portable end 265 / 230, cuDNN 575 / 415, flash 310 / 263, efficient 162 / 118,
# flex_attention 390 / 325): one sample of each of the set's 124 rows (10 shapes x 7 implementations x
# hot, cold, less SDPA's efficient backend at the 8 grouped-query shapes, which it refuses) takes about
# 0.14 s, so the 54 samples (18 a replicate) a row takes when it meets the CI target at once are about
# 8 s; each shape costs about 0.3 s a replicate of inputs, timers and probes plus flex_attention's
# compilation, 1.5 s in the first replicate and 0.5 s from the inductor cache in the others:
# 10 x (3 x 0.3 + 1.5 + 2 x 0.5) = 34 s. Expected: about 42 s. The cap bounds a row that does not meet
# the CI target: 0.15 s a row is at most 19 s of samples in all (53 s with the rest), and still at least
# two blocks of samples a replicate for every row (a 4 ms launch: 9 samples a block).
SCOPE_CAP_S = {"models": 0.15}

# Peers a scope leaves out. At the models shapes SDPA's default dispatch adds nothing: it runs one of the
# backends, which are all timed there, and the fastest peer is chosen among the backends (lab.report.load).
# Leaving it out saves 7 % of the set's samples and 1.6 s of their GPU time, but in an A/B on one H100 the
# set's job seconds moved by 0.2 s, within noise (data/explorations/2026-11-26-models-set-cost).
SCOPE_PEERS_LEFT_OUT = {"models": ("sdpa_default",)}


# The sustained mode (lab.measure.timing: turns of back-to-back replays at the clocks the GPU holds at
# its power limit, issue 45) is measured at the run's shapes that the run's SUSTAINED spec names
# (RunParams.sustained, a shape spec as SHAPES takes), by the end of the headline branch (the sm_90a one
# on Hopper), its parent and SUSTAINED_PEERS (the peers that are the fastest at some shape: SDPA's flash
# and efficient backends and flex_attention trail them, and its default dispatch runs cuDNN on Hopper).
# The default is the large set, the headline shapes at D = 64 and 128, causal and not: so few because a
# shape costs each replicate a second of lead-in and three 400 ms turns a row (about 5.8 s with four
# rows), and `make ablation` may grow by 120 s for FlashAttention-3 and this mode together; with seven
# rows and two 250 ms turns (data/explorations/2026-11-27-fa3-peer, call 3) the intervals were +-5 %.
# `SUSTAINED=large,long,models` adds the shapes issue 46 judges sustained: 16 more, about 100 s a
# replicate at the 6.5 s a shape docs/methodology.md gives. Runs recorded before the spec measured the large set.
DEFAULT_SUSTAINED = "large"
SUSTAINED_PEERS = ("sdpa_cudnn", "flash_attn3")


def shape_set(name: str) -> list[Shape]:
    """canonical | large | long | sweep | models | models-fp16 | a list like '4,16,512,64' or '4,32,512,64,causal,kv8,bf16'
    joined by ';'."""
    if name == "canonical":
        shapes = []
        for B, H in ((1, 8), (4, 16), (8, 16)):
            shapes += [Shape(B, H, 512, 64, False), Shape(B, H, 512, 64, True)]
        return shapes + [Shape(32, 8, 512, 64, False)]
    if name == "large":
        return [Shape(4, 16, 4096, D, c) for D in (64, 128) for c in (False, True)]
    if name == "long":
        return list(LONG_SHAPES)
    if name == "sweep":  # B * S held at SWEEP_TOKENS, H = 16, non-causal: TFLOP/s against S
        return [Shape(SWEEP_TOKENS // S, 16, S, D, False) for D in (64, 128) for S in SWEEP_S]
    if name in ("models", "models-fp16"):  # prefill, causal, bf16 (or fp16), B * S = MODEL_TOKENS
        dtype = MODEL_DTYPE if name == "models" else "fp16"
        return [Shape(MODEL_TOKENS // S, H, S, D, True, H_kv, dtype) for (H, H_kv, D) in MODELS
                for S in MODEL_SEQ_LENS]
    try:
        return [Shape.parse(item) for item in name.split(";")]
    except ValueError as exc:
        raise ValueError(f"{exc}, or a set name ({', '.join(SET_SCOPES)})") from None


def scoped_shapes(spec: str) -> dict[Shape, str]:
    """Shape -> scope (SET_SCOPES) for a spec: set names joined by '+' or ',' (e.g.
    'canonical,large,long,sweep'), or explicit shapes (every one "ladder")."""
    parts = spec.replace("+", ",").split(",")
    if not all(part in SET_SCOPES for part in parts):
        return {s: "ladder" for s in shape_set(spec)}
    out: dict[Shape, str] = {}
    for part in parts:
        for s in shape_set(part):
            scope = SET_SCOPES[part]
            out[s] = min(out.get(s, scope), scope, key=SCOPES.index)
    return out


def shapes_from(spec: str) -> list[Shape]:
    """The shapes of a spec (scoped_shapes), in order, without repeats."""
    return list(scoped_shapes(spec))


def scopes_from(spec: str) -> list[str]:
    """Each shape's scope, in shapes_from's order."""
    return list(scoped_shapes(spec).values())


def shape_scopes(p: dict) -> dict[Shape, str]:
    """A run's shape -> scope (runs recorded before scopes measured every shape as "ladder")."""
    shapes = [Shape.of(s) for s in p["shapes"]]
    return dict(zip(shapes, p.get("shape_scopes") or ["ladder"] * len(shapes)))


def spec_of(shapes: list[Shape]) -> str:
    """A spec that gives `shapes`: set names where some sets together give exactly them (in
    order), else the shapes themselves joined by ';'."""
    from itertools import combinations

    sets = list(SET_SCOPES)
    for n in range(1, len(sets) + 1):
        for combo in combinations(sets, n):
            if list(shapes) == shapes_from(",".join(combo)):
                return ",".join(combo)
    return ";".join(s.spec for s in shapes)


# The decode set (issue 50; lab.kernels.decode): serving's attention for the heads of MODELS that serve
# chat models (GPT-2 and BERT-base's 12 full heads aside), bf16. For each: a batch of 8 at 8k tokens, one
# new query; 32 sequences of mixed lengths up to 4k; 16 sequences at 32k in 64-token pages with 4 new
# queries (speculative decoding); 64 sequences at 1k. Then one sequence of 128k tokens with 8 K/V heads and
# one query (a grid of one CTA a head cannot fill the GPU: split the keys or idle), and Llama-3-70B at 128k
# for 8 sequences (4.3 GB). And Falcon-7B's 32 sequences at 1k: its 71 query heads on one K/V head make the set's
# only wide group, whose kernel (row warps or 16-row blocks) and chunks turn on the batch (steps 55 and 56), and
# its other uniform batches (8 x 8k, 64 x 1k) sit at the two ends of that choice. No cache over
# DECODE_MAX_CACHE_BYTES, so two copies and the output fit any GPU the study runs on. A cache under
# DECODE_STREAMING_L2 times the L2 can be served from L2 (Falcon-7B's one K/V head): it is judged against the
# peers only, not against the GPU's copy bandwidth.
DECODE_MODELS = [heads for heads in MODELS if heads != (12, 12, 64)]
DECODE_MAX_CACHE_BYTES = 8 << 30
DECODE_STREAMING_L2 = 4


def decode_shapes() -> list:
    from lab.kernels.decode import DecodeShape

    shapes = []
    for H, H_kv, D in DECODE_MODELS:
        shapes += [DecodeShape(8, H, H_kv, D, 8192), DecodeShape(32, H, H_kv, D, 4096, mixed=True),
                   DecodeShape(16, H, H_kv, D, 32768, q_len=4, page_size=64), DecodeShape(64, H, H_kv, D, 1024)]
    return shapes + [DecodeShape(1, 32, 8, 128, 131072), DecodeShape(8, 64, 8, 128, 131072),
                     DecodeShape(32, 71, 1, 64, 1024)]


def streams_from_hbm(shape, l2_bytes: int) -> bool:
    """Whether a decode shape's cache is at least DECODE_STREAMING_L2 times the L2: it streams from HBM,
    and the copy bandwidth is its bar (issue 50's target 1)."""
    return shape.cache_bytes >= DECODE_STREAMING_L2 * l2_bytes


# Where Nsight Compute profiles one call of every decode step and decode peer (issue 50: the profiler's DRAM
# throughput per step; lab.measure.decode_profile): Llama-3-8B's batch 8 of 8k tokens (streaming, the keys split
# in a few chunks) and the batch 1 of 128k (split in many), those a run times; else the run's first decode
# shape. Two shapes, both in one ncu process, so that the decode set stays within issue 50's time (target 4).
DECODE_PROFILE_SPECS = ("8,32,8,128,8192,bf16", "1,32,8,128,131072,bf16")


def decode_profile_shapes(shapes: list) -> list:
    """The decode shapes a run profiles, of those it times (DECODE_PROFILE_SPECS; else its first)."""
    chosen = [s for s in shapes if s.spec in DECODE_PROFILE_SPECS]
    return chosen or list(shapes[:1])


DECODE_SETS = ("decode",)  # the names DECODE takes besides shapes (RunParams.decode)


def decode_shapes_from(spec: str) -> list:
    """The decode shapes a run's DECODE names: "" none, "decode" the decode set (decode_shapes), else
    decode shapes B,H,H_kv,D,cache_len[,qN][,mixed][,pageN][,fp16|bf16] joined by ';'. A ValueError names
    the piece at fault."""
    from lab.kernels.decode import DecodeShape

    spec = str(spec).strip()
    if not spec:
        return []
    if spec in DECODE_SETS:
        return decode_shapes()
    shapes = []
    for piece in (p.strip() for p in spec.split(";")):
        if not piece:
            continue
        try:
            shape = DecodeShape.parse(piece)
        except ValueError as exc:
            raise ValueError(f"{exc} (or the set name {', '.join(DECODE_SETS)})") from None
        if shape.cache_bytes > DECODE_MAX_CACHE_BYTES:
            raise ValueError(f"decode shape {piece!r}: a cache of {shape.cache_bytes / 2**30:.1f} GiB; at most "
                             f"{DECODE_MAX_CACHE_BYTES >> 30} GiB")
        shapes.append(shape)
    return shapes
