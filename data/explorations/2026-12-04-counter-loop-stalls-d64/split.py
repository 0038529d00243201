"""Call 1: where each kernel's PC samples lie, the main loop's body (the instructions executed most often) against
the rest of the kernel, step 67 over FA3 at the same shape (one launch each, the same inputs: the totals compare as
they are), and the rest by the instruction's mnemonic (the ten that hold the most of the excess).

    python split.py src_<shape>.csv
"""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "2026-12-02-launch-by-launch"))
from stall_ledger import kernels, mnemonic, number  # noqa: E402

ALL = "Warp Stall Sampling (All Samples)"


def parts(rows):
    """(all samples, the loop body's, {mnemonic: samples outside the body})."""
    by_count = defaultdict(float)
    for r in rows:
        by_count[number(r["Instructions Executed"])] += number(r[ALL])
    loop = max(by_count, key=by_count.get)
    total = sum(number(r[ALL]) for r in rows)
    body = sum(number(r[ALL]) for r in rows if number(r["Instructions Executed"]) == loop)
    rest = defaultdict(float)
    for r in rows:
        if number(r["Instructions Executed"]) != loop:
            rest[mnemonic(r["Source"])] += number(r[ALL])
    return total, body, rest


(step, ours), (peer, theirs) = kernels(sys.argv[1])[:2]
(a_all, a_body, a_rest), (b_all, b_body, b_rest) = parts(ours), parts(theirs)
print(f"ours: {step[:90]}\nFA3:  {peer[:90]}")
print(f"{'':12s} {'ours':>10s} {'FA3':>10s} {'ours/FA3':>9s}")
for name, a, b in (("all", a_all, b_all), ("loop body", a_body, b_body), ("the rest", a_all - a_body, b_all - b_body)):
    print(f"{name:12s} {a:10.0f} {b:10.0f} {a / b if b else float('nan'):9.3f}")
print("the rest by mnemonic, the largest excesses (ours - FA3, samples):")
for m in sorted(set(a_rest) | set(b_rest), key=lambda m: -(a_rest[m] - b_rest[m]))[:10]:
    print(f"  {m:24s} {a_rest[m]:8.0f} {b_rest[m]:8.0f} {a_rest[m] - b_rest[m]:+8.0f}")
