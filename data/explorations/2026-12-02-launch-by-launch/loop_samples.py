"""Call 6: the PC samples of each kernel's main loop (the instructions executed most often: the K/V loop's body),
by stall reason, per 1000 warp-iterations of 128 keys, step 53 against FA3 (the loop's executions times its keys a
tile over 128). "unlisted": samples the source page gives no reason column for (FA3's are on its first P V wgmma).

    tar xJf call6/source_pages.tar.xz -C /tmp && python loop_samples.py /tmp/src_<shape>.csv <keys a tile, step 53>,<keys a tile, FA3>
"""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(__file__))
from stall_ledger import kernels, number  # noqa: E402

ALL = "Warp Stall Sampling (All Samples)"


def loop_samples(rows, keys_a_tile):
    """Samples by reason over the instructions executed most often (the loop body), per 1000 warp-iterations of
    128 keys; "unlisted" is what the reasons do not cover, "ALL" the loop's whole."""
    reasons = [c for c in rows[0] if c.startswith("stall_") and "Not Issued" not in c]
    by_count = defaultdict(float)
    for r in rows:
        by_count[number(r["Instructions Executed"])] += number(r[ALL])
    loop = max(by_count, key=by_count.get)
    body = [r for r in rows if number(r["Instructions Executed"]) == loop]
    per = 1000 / (loop * keys_a_tile / 128)  # warp-iterations of 128 keys
    out = {c[len("stall_"):]: sum(number(r[c]) for r in body) * per for c in reasons}
    out["ALL"] = sum(number(r[ALL]) for r in body) * per
    out["unlisted"] = out["ALL"] - sum(v for c, v in out.items() if c != "ALL")
    return out


def main(path, keys):
    (step_name, step_rows), (peer_name, peer_rows) = kernels(path)[:2]
    ours, fa3 = loop_samples(step_rows, keys[0]), loop_samples(peer_rows, keys[1])
    print(f"{'reason':18s} {'ours':>7s} {'FA3':>7s} {'diff':>7s}   (samples per 1000 warp-iterations of 128 keys)")
    for c in sorted(ours, key=lambda c: -(ours[c] - fa3[c])):
        if abs(ours[c]) + abs(fa3[c]) > 1:
            print(f"{c:18s} {ours[c]:7.1f} {fa3[c]:7.1f} {ours[c] - fa3[c]:+7.1f}")


if __name__ == "__main__":
    main(sys.argv[1], [int(x) for x in sys.argv[2].split(",")])
