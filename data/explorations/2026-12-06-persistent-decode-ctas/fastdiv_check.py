"""The multiplier rule of step72_fastdiv.patch's FastDivisor, checked against integer division off the GPU: for a
divisor d (1 <= d <= INT_MAX), s = ceil(log2 d) and m = floor(2^32 (2^s - d) / d) + 1 (32 bits), the quotient of a
dividend n <= INT_MAX is (umulhi(n, m) + n) >> s. Every divisor up to 5,000 and 20,000 random ones below 2^31, each
at its edge dividends and 50 random ones below 2^31; prints how many quotients differ (0 where the rule holds).

    python data/explorations/2026-12-06-persistent-decode-ctas/fastdiv_check.py
"""
import random

INT_MAX = (1 << 31) - 1


def multiplier(d: int) -> tuple[int, int]:
    s = (d - 1).bit_length()  # ceil(log2 d)
    return ((1 << 32) * ((1 << s) - d)) // d + 1, s


def quotient(n: int, m: int, s: int) -> int:
    return (((n * m) >> 32) + n) >> s  # umulhi(n, m): the high 32 bits of the 64-bit product


rng = random.Random(1)
divisors = list(range(1, 5001)) + [rng.randrange(1, 1 << 31) for _ in range(20000)] + [INT_MAX, 1 << 30, 3 << 29]
wrong = checked = 0
for d in divisors:
    m, s = multiplier(d)
    assert m < 1 << 32, d  # it fits the kernel's 32-bit multiplier
    edges = [0, 1, d - 1, d, d + 1, 2 * d - 1, INT_MAX - 1, INT_MAX]
    for n in [x for x in edges if 0 <= x <= INT_MAX] + [rng.randrange(0, 1 << 31) for _ in range(50)]:
        checked += 1
        wrong += quotient(n, m, s) != n // d
print(f"{len(divisors)} divisors, {checked} quotients, {wrong} wrong")
