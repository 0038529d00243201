"""The chunks the decode end's rule gives the decode set's mixed batches, and what each CTA then reads: the rule as
kernels/include/fa/decode.cuh states it (split_chunks_one_cta_an_sm, chunks_by_efficiency, chunks_of; BC = 64 keys,
kMinChunkKeys = 256, FA_DECODE_SPLIT_WITHIN_PCT = 85), worked out for a GPU of `sms` SMs and `per_sm` CTAs an SM of
the 16-row tile (132 and 2 on the H100 and H200 here), and the lengths lab.kernels.decode gives a mixed batch. The
launcher cannot see the lengths (they are on the GPU), so it plans every sequence as full.

    PYTHONPATH=. python data/explorations/2026-12-07-decode-mixed-chunks/chunks.py [sms] [per_sm] [force ...]
"""
import math
import sys

from lab.kernels.decode import DecodeShape
from lab.studies.shapes import decode_shapes

BC, MIN_CHUNK, WITHIN = 64, 256, 0.85


def rule(pairs, wave, sms, capacity):
    most = max(1, min(128, capacity // MIN_CHUNK))
    if not (10 * pairs < 8 * wave and most > 1):
        return 1
    tiles, eff = math.ceil(capacity / BC), {}
    for s in range(1, most + 1):
        if s > 1 and math.ceil(tiles / s) == math.ceil(tiles / (s - 1)):
            continue
        waves = pairs * s / sms
        eff[s] = waves / math.ceil(waves)
    best = max(eff.values())
    return next((s for s in range(2, most + 1) if s in eff and eff[s] >= WITHIN * best), 2)


def chunks(capacity, splits):
    chunk = math.ceil(math.ceil(capacity / splits) / BC) * BC
    return chunk, math.ceil(capacity / chunk)


sms, per_sm = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (132, 2)
forced = [int(a) for a in sys.argv[3:]]
print(f"{sms} SMs, {per_sm} CTAs an SM of the 16-row tile (a wave of {sms * per_sm})")
print(f"{'shape':32} {'splits':>6} {'chunk':>5} {'CTAs':>5} {'with keys':>9} {'longest':>7} {'mean':>6} "
      f"{'longest/mean':>12}")
for shape in [s for s in decode_shapes() if s.mixed]:
    rows = shape.q_len * shape.H // shape.H_kv
    if rows > 32:
        continue  # the row warps' calls (Falcon-7B) plan otherwise
    pairs = math.ceil(rows / 16) * shape.H_kv * shape.B
    for splits in [rule(pairs, sms * per_sm, sms, shape.cache_len)] + forced:
        chunk, n = chunks(shape.cache_len, splits)
        work = [min(chunk, max(0, length - c * chunk)) for length in shape.cache_lens() for c in range(n)]
        busy = [w for w in work if w > 0]
        mean = sum(busy) / len(busy)
        print(f"{shape.spec:32} {n:6d} {chunk:5d} {len(work) * shape.H_kv:5d} {len(busy) * shape.H_kv:9d} "
              f"{max(busy):7d} {mean:6.0f} {max(busy) / mean:12.2f}")
