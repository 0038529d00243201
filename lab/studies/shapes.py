"""The shapes a run measures: named sets, what each set is measured with (its scope), and the
shapes the studies single out (the headline).

    canonical  S = 512, D = 64: (1, 8), (4, 16), (8, 16) causal and not, and (32, 8) non-causal
    large      (4, 16, 4096, D), D = 64 and 128, causal and not
    long       (2, 16, 8192, 128), (1, 16, 16384, 128), (16, 16, 1024, 128), causal and not
    sweep      B * S = 16384, H = 16, S from 256 to 16384, D = 64 and 128, non-causal

A spec is set names joined by ',' or '+' (`canonical,large,long,sweep`), or explicit shapes
`B,H,S,D[,causal]` joined by ';' (lab.kernels.shape).
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

# What a shape set is measured with. "ladder": every step, the knock-outs and the A/A twin, in the
# run's modes. "tails": the last step of each branch (lab.kernels.manifest.branch_ends) and the peers, in the
# run's modes: the long shapes, where the early steps would take minutes. "tails-hot": the same, hot
# only: the TFLOP/s-vs-S sweep. A shape in several sets takes the widest scope.
SET_SCOPES = {"canonical": "ladder", "large": "ladder", "long": "tails", "sweep": "tails-hot"}
SCOPES = ("ladder", "tails", "tails-hot")  # widest first


def shape_set(name: str) -> list[Shape]:
    """canonical | large | long | sweep | a list like '4,16,512,64' or '4,16,512,64,causal' joined by ';'."""
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
    shapes = [s if isinstance(s, Shape) else Shape(*s) for s in p["shapes"]]
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
