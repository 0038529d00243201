"""How a launch's causal work tiles fall on its CTAs, simulated on the CPU (no GPU): step 51's static heavy-light
pairs, step 35's counter as it is (a CTA's first two tiles fixed, c and c + grid, then the counter, heaviest first),
and the counter with the second tile mirrored (min(tiles, 2 grid) - 1 - c where that is in the second round: the
heaviest first tile with the lightest of the second round). A tile's cost is its key tiles (128 keys) plus OVERHEAD key tiles' worth of its prologue and epilogue;
a CTA takes the counter's next tile when it finishes its last (ties: lower CTA first). Prints each launch's end over
the mean CTA's work (1.000: perfectly balanced) and the predicted speed of the counter forms over the static pairs.

    python sim.py [OVERHEAD]
"""
import heapq
import math
import sys

BR, BC, SMS = 192, 128, 132
OVERHEAD = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0


def cost(q, S):
    return math.ceil(min(S, (q + 1) * BR) / BC) + OVERHEAD


def counter_order(heads, m):
    """Heaviest first, heads fastest (one L2 section: the launches here fit one)."""
    return [(m - 1 - level, h) for level in range(m) for h in range(heads)]


def counter(heads, m, S, mirror=False):
    tiles = [cost(q, S) for q, _ in counter_order(heads, m)]
    grid = min(len(tiles), SMS)
    load = [0.0] * grid
    for c in range(grid):
        load[c] += tiles[c]
        # mirrored: the second round's tiles (up to grid of them) in reverse, the heaviest first tile with the lightest
        second = (min(len(tiles), 2 * grid) - 1 - c) if mirror else (c + grid)
        if grid <= second < len(tiles):
            load[c] += tiles[second]
    # the counter from 2 grid on: the CTA that finishes first takes the next
    heap = [(load[c], c) for c in range(grid)]
    heapq.heapify(heap)
    for t in tiles[2 * grid:]:
        done, c = heapq.heappop(heap)
        heapq.heappush(heap, (done + t, c))
    ends = [d for d, _ in heap]
    return max(ends), sum(tiles) / grid


def static_pairs(heads, m, S):
    pairs = [cost(q, S) + (cost(m - 1 - q, S) if m - 1 - q != q else 0) for h in range(heads)
             for q in range((m + 1) // 2)]
    grid = min(len(pairs), SMS)
    load = [0.0] * grid
    for i, p in enumerate(pairs):  # round-robin, as step 27's static list
        load[i % grid] += p
    return max(load), sum(pairs) / grid


ROWS = [(1, 8, 4096), (1, 10, 4096), (1, 11, 4096), (1, 12, 4096), (1, 13, 4096), (1, 14, 4096), (1, 16, 4096), (1, 18, 4096), (1, 20, 4096), (1, 23, 4096),
        (1, 7, 8192), (1, 8, 8192), (1, 9, 8192), (1, 10, 8192), (1, 12, 8192), (2, 12, 8192), (1, 71, 8192),
        (4, 16, 4096)]
print(f"overhead {OVERHEAD} key tiles a work tile; end / mean CTA, and the counter forms' speed over the pairs")
print(f"{'shape':18} {'tiles/SM':>8} {'pairs':>7} {'counter':>8} {'mirror':>8} {'c/pairs':>8} {'m/pairs':>8} {'m/c':>7}")
for B, H, S in ROWS:
    m = math.ceil(S / BR)
    heads = B * H
    p_end, p_mean = static_pairs(heads, m, S)
    c_end, c_mean = counter(heads, m, S)
    r_end, _ = counter(heads, m, S, mirror=True)
    print(f"{str((B, H, S)):18} {heads * m / SMS:8.2f} {p_end / p_mean:7.3f} {c_end / c_mean:8.3f} "
          f"{r_end / c_mean:8.3f} {p_end / c_end:8.3f} {p_end / r_end:8.3f} {c_end / r_end:7.3f}")
