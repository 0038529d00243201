"""SASS of steps (and the twin at its defaults) built from two trees, compared kernel by kernel with the
enum type of the tile kind's mangled name normalised (the refactor moves TileKind to fa::HopperTileKind)."""
import re, subprocess, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from lab.kernels import switches

def sass(tree, name, twin=False):
    out = subprocess.run([sys.executable, "-c", f"""
import sys; sys.path.insert(0, {tree!r})
from lab.kernels import switches
sys.stdout.write(switches.sass({name!r}, "sm_90a", twin={twin!r} or None))
"""], capture_output=True, text=True, cwd=tree)
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return out.stdout

NORM = [(re.compile(r"N2fa14HopperTileKindE"), "TILEKIND"), (re.compile(r"N[^E]{0,40}?8TileKindE"), "TILEKIND"),
        (re.compile(r"NS_8TileKindE"), "TILEKIND")]
def norm(text):
    by = switches.sass_by_kernel(text)
    out = {}
    for name, body in by.items():
        n = name
        for rx, rep in NORM:
            n = rx.sub(rep, n)
        out[n] = body
    return out

before, after = sys.argv[1], sys.argv[2]
for name, twin in [(n, False) for n in sys.argv[3:]] + [("uniform_descriptors", True)]:
    a, b = norm(sass(before, name, twin)), norm(sass(after, name, twin))
    same_bodies = sorted(a.values()) == sorted(b.values())
    print(f"{name}{' (twin at its defaults)' if twin else ''}: {len(a)} kernels before, {len(b)} after; "
          f"same SASS bodies: {same_bodies}; same names after normalising: {sorted(a) == sorted(b)}")
