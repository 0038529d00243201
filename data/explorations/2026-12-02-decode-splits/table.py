"""A sweep's table (sweep.py's sweep.json): per shape and mode, each configuration's median (us), chunks, and its
speed over a base configuration (the base's median over its own) and over the fastest SDPA backend's median (the
peer's over its own; > 1: faster than the peer). Medians of 15 samples in 5 interleaved rounds.

    python table.py sweep.json BASE > table.txt
"""
import json
import sys

rec = json.load(open(sys.argv[1]))
base = sys.argv[2]
names = list(rec["configs"])
print(f"{'shape':<34} {'mode':<4} " + " ".join(format(n + " (chunks) us", ">18") for n in names) + " "
      + " ".join(format(base + "/" + n, ">10") for n in names if n != base) + " "
      + " ".join(format(n + " vs peer", ">12") for n in names) + "  peer")
for r in rec["rows"]:
    med, mode = r["median_us"], r.get("mode", "hot")
    peers = {n: v for n, v in med.items() if n.startswith("sdpa")}
    peer = min(peers, key=peers.get) if peers else None
    cells = " ".join(format(f"{med[n]:.1f} ({r['splits'][n]})", ">18") for n in names)
    speed = " ".join(f"{med[base] / med[n]:>10.3f}" for n in names if n != base)
    vs = " ".join(f"{(peers[peer] / med[n]) if peer else float('nan'):>12.3f}" for n in names)
    print(f"{r['shape']:<34} {mode:<4} {cells} {speed} {vs}  {peer or 'none takes it'}")
