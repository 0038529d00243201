"""Call 6: the PC samples of each kernel's main loop (the instructions executed most often: the K/V loop's body),
by stall reason, per 1000 warp-iterations of 128 keys, step 53 against FA3 (the loop's executions times its keys a
tile over 128). "unlisted": samples the source page gives no reason column for (FA3's are on its first P V wgmma).

    python loop_samples.py call6/src_<shape>.csv <keys a tile, step 53>,<keys a tile, FA3>
"""
import sys
sys.path.insert(0, __import__("os").path.dirname(__file__))
from stall_ledger import kernels, number
from collections import defaultdict
f=sys.argv[1]; keys=[int(x) for x in sys.argv[2].split(',')]
res={}
for (name,rows),kk in zip(kernels(f),keys):
    reasons=[c for c in rows[0] if c.startswith('stall_') and 'Not Issued' not in c]
    by=defaultdict(float)
    for r in rows: by[number(r['Instructions Executed'])]+=number(r["Warp Stall Sampling (All Samples)"])
    loop=max(by,key=by.get)
    lr=[r for r in rows if number(r['Instructions Executed'])==loop]
    norm=loop*kk/128  # iterations normalised to 128 keys
    d={c[6:]:sum(number(r[c]) for r in lr)/norm*1000 for c in reasons}
    d['unlisted']=sum(number(r["Warp Stall Sampling (All Samples)"]) for r in lr)/norm*1000-sum(d.values())
    d['ALL']=sum(number(r["Warp Stall Sampling (All Samples)"]) for r in lr)/norm*1000
    res[name[:20]]=d
a,b=list(res)
print(f"{'reason':18s} {'ours':>7s} {'FA3':>7s} {'diff':>7s}   (samples per 1000 warp-iterations of 128 keys)")
for c in sorted(res[a],key=lambda c:-(res[a][c]-res[b][c])):
    if abs(res[a][c])+abs(res[b][c])>1: print(f"{c:18s} {res[a][c]:7.1f} {res[b][c]:7.1f} {res[a][c]-res[b][c]:+7.1f}")
