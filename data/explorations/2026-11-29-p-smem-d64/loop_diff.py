"""Opcodes whose counts differ between two builds' unmasked one-tile K/V loop (the shortest backward-branch body of
at least 2 KB holding 12 HGMMA and 66 MUFU) in the three-warpgroup kind-3 kernel, from `cuobjdump -sass` dumps made
as loop_counts.py says.

    python loop_diff.py base.sass other.sass
"""
import collections, re, sys

ADDR = re.compile(r"\s+/\*([0-9a-f]+)\*/")


def loop_ops(path, kind="3", from_queue="0"):
    for f in re.split(r"\n\s+Function : ", open(path).read())[1:]:
        m = re.search(r"Li64ELN2fa14HopperTileKindE(\d)ELb(\d)", f.split("\n")[0])
        if not m or m.groups() != (kind, from_queue):
            continue
        lines = [l for l in f.split("\n") if re.match(r"\s+/\*[0-9a-f]{4,5}\*/", l)]
        addr = lambda l: int(ADDR.match(l).group(1), 16)
        best = None
        for l in lines:
            jump = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", l)
            if jump and int(jump.group(1), 16) < addr(l) and addr(l) - int(jump.group(1), 16) > 0x800:
                body = [x for x in lines if int(jump.group(1), 16) <= addr(x) <= addr(l)]
                ops = collections.Counter(re.sub(r"^\s*/\*[0-9a-f]+\*/\s*(@!?U?P\w+\s+)?", "", x).split()[0] for x in body)
                count = lambda p: sum(v for k, v in ops.items() if k.startswith(p))
                if count("MUFU") == 66 and count("HGMMA") == 12 and (best is None or len(body) < best[0]):
                    best = (len(body), ops)
        return best


(n_a, a), (n_b, b) = loop_ops(sys.argv[1]), loop_ops(sys.argv[2])
print(f"instructions {n_a} {n_b}")
for op in sorted(set(a) | set(b)):
    if a[op] != b[op]:
        print(f"{op:40s} {a[op]:4d} {b[op]:4d}")
