import math
SMS=132
def cdiv(a,b): return -(-a//b)
def tiles(B,H,S,D,Hkv,kind):
    # returns BR,BC,ctas_per_sm
    if D==128: return 128,128,1
    work=cdiv(S,64)*B*H
    if S<8192 and work>=10*SMS: return 64,128,3
    if S>=4096: return 64,192,2
    return 64,128,2
def cost(q0,S,BR,BC,c0):
    return cdiv(min(S,q0+BR),BC)+c0
def pair_sched(B,H,S,BR,BC,G,c0):
    m=cdiv(S,BR); iph=(m+1)//2; tot=iph*B*H
    load=[0.0]*G
    for c in range(G):
        it=c
        while it<tot:
            p=it%iph
            load[c]+=cost((m-1-p)*BR,S,BR,BC,c0)
            if m-1-p!=p: load[c]+=cost(p*BR,S,BR,BC,c0)
            it+=G
    return load
def lpt_snake(B,H,S,BR,BC,G,c0,section=None):
    m=cdiv(S,BR); BH=B*H
    section=section or BH
    seq=[]
    for s0 in range(0,BH,section):
        hs=range(s0,min(BH,s0+section))
        for mm in range(m-1,-1,-1):
            for h in hs: seq.append(cost(mm*BR,S,BR,BC,c0))
    load=[0.0]*G
    for i,c in enumerate(seq):
        r,k=divmod(i,G)
        load[k if r%2==0 else G-1-k]+=c
    return load
def greedy(B,H,S,BR,BC,G,c0):
    import heapq
    m=cdiv(S,BR)
    seq=sorted([cost(mm*BR,S,BR,BC,c0) for mm in range(m)]*(B*H),reverse=True)
    h=[(0.0,k) for k in range(G)]
    load=[0.0]*G
    for c in seq:
        l,k=heapq.heappop(h); load[k]=l+c; heapq.heappush(h,(l+c,k))
    return load
def sm_loads(load,cps):
    sm=[0.0]*SMS
    for c,l in enumerate(load): sm[c%SMS]+=l
    return sm
def stat(load,cps):
    sm=sm_loads(load,cps)
    mean=sum(sm)/SMS
    return max(sm)/mean-1, max(load)/(sum(load)/len(load))-1
shapes=[(1,8,512,64,8),(4,16,512,64,16),(8,16,512,64,16),(4,16,4096,64,16),(4,16,4096,128,16),(2,16,8192,128,16),(1,16,16384,128,16),(16,16,1024,128,16),
 (4,32,2048,128,8),(1,32,8192,128,8),(4,64,2048,128,8),(1,64,8192,128,8),(4,28,2048,128,4),(1,28,8192,128,4),(4,71,2048,64,1),(1,71,8192,64,1),(4,12,2048,64,12),(1,12,8192,64,12)]
c0=0.5
print("shape BR BC cps G | pair sm% cta% | snake sm% cta% | greedy sm% | snake-sec sm%")
for B,H,S,D,Hkv in shapes:
    BR,BC,cps=tiles(B,H,S,D,Hkv,None)
    m=cdiv(S,BR)
    items=((m+1)//2)*B*H
    G=min(items,SMS*cps)
    Gs=min(m*B*H,SMS*cps)
    a=stat(pair_sched(B,H,S,BR,BC,G,c0),cps)
    b=stat(lpt_snake(B,H,S,BR,BC,Gs,c0),cps)
    g=stat(greedy(B,H,S,BR,BC,Gs,c0),cps)
    # section: heads whose K/V fits 16MB
    kvb=S*D*2*2*(H//Hkv)  # bytes of K/V per q head... per kv head shared by group
    sec=max(1,int(16e6//(S*D*2*2))*(H//Hkv))
    d=stat(lpt_snake(B,H,S,BR,BC,Gs,c0,section=sec),cps)
    print((B,H,S,D,Hkv),BR,BC,cps,G,"| %.1f %.1f | %.1f %.1f | %.1f | %.1f (sec %d)"%(a[0]*100,a[1]*100,b[0]*100,b[1]*100,g[0]*100,d[0]*100,sec))
