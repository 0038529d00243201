import heapq, sys
SMS=132
def cdiv(a,b): return -(-a//b)
def w(m,S,BR,BC,c0=0.5): return cdiv(min(S,m*BR+BR),BC)+c0
def sections(BHkv,g,per):
    secs=cdiv(BHkv,per); base,extra=divmod(BHkv,secs)
    out=[];f=0
    for i in range(secs):
        n=(base+(1 if i<extra else 0))
        out.append(range(f*g,(f+n)*g)); f+=n
    return out
def order_phase(B,H,S,Hkv,BR,per,L):
    M=cdiv(S,BR); g=H//Hkv; out=[]
    for sec in sections(B*Hkv,g,per):
        for lvl in range(M-1,L-1,-1):
            for h in sec: out.append((lvl,h))
    for lvl in range(min(L,M)-1,-1,-1):
        for h in range(B*H): out.append((lvl,h))
    return out
def order_static_pairs(B,H,S,BR):
    M=cdiv(S,BR); out=[]
    for h in range(B*H):
        for p in range((M+1)//2):
            out.append((M-1-p,h))
            if M-1-p!=p: out.append((p,h))
    return out
def simulate(order,S,BR,BC,G,g,D,depth=2,dynamic=True):
    n=len(order); G=min(G,n)
    if not dynamic:  # static pairs round robin: items are pairs
        pass
    nxt=0; committed=[[] for _ in range(G)]
    for k in range(depth):
        for c in range(G):
            if nxt<n: committed[c].append(order[nxt]); nxt+=1
    heap=[(0.0,c) for c in range(G)]; finish=[0.0]*G; inflight={}; peak=0
    tileb=BC*D*2*2
    while heap:
        t,c=heapq.heappop(heap)
        if not committed[c]: finish[c]=t; inflight.pop(c,None); continue
        m,h=committed[c].pop(0)
        if nxt<n: committed[c].append(order[nxt]); nxt+=1
        inflight[c]=(h//g,m)
        pref={}
        for kv,mm in inflight.values(): pref[kv]=max(pref.get(kv,-1),mm)
        ws=sum((cdiv(min(S,(mm+1)*BR),BC))*tileb for mm in pref.values())
        peak=max(peak,ws)
        heapq.heappush(heap,(t+w(m,S,BR,BC),c))
    tot=sum(w(m,S,BR,BC) for m,h in order)
    return max(finish)/(tot/G)-1, peak/1e6
shapes=[(4,16,4096,128,16),(2,16,8192,128,16),(1,16,16384,128,16),(16,16,1024,128,16),
 (4,32,2048,128,8),(1,32,8192,128,8),(4,64,2048,128,8),(1,64,8192,128,8),(4,28,2048,128,4),(1,28,8192,128,4)]
for B,H,S,D,Hkv in shapes:
    BR=BC=128; G=SMS; g=H//Hkv; M=cdiv(S,BR)
    kvb=2*S*D*2; row=[]
    # static pairs: per-CTA loads
    pairs=cdiv(M,2)*B*H; loads=[0]*G
    for i in range(pairs):
        h,p=divmod(i,cdiv(M,2)); c=i%G
        loads[c]+=w(M-1-p,S,BR,BC)+(w(p,S,BR,BC) if M-1-p!=p else 0)
    row.append("static %4.1f%%"%((max(loads)/(sum(loads)/G)-1)*100))
    for budget in (25e6,12.5e6):
        per=max(1,min(B*Hkv,int(budget//kvb)))
        for L in (0, cdiv(4*G,B*H), cdiv(8*G,B*H)):
            L=min(L,M)
            tail,peak=simulate(order_phase(B,H,S,Hkv,BR,per,L),S,BR,BC,G,g,D)
            row.append("%2.0fM L%-2d %4.1f%% %3.0fMB"%(budget/1e6,L,tail*100,peak))
    print((B,H,S,D,Hkv)," | ".join(row)); sys.stdout.flush()
