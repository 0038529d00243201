"""Opcode counts of the K/V loops (a backward branch spanning at least 2 KB, holding 12 HGMMA and 66 MUFU: one
128-key tile of the three-warpgroup D = 64 kernels, kinds 3 and 4) in a `cuobjdump -sass` dump of step 52's twin.

    nvcc -std=c++17 -O3 --expt-relaxed-constexpr -gencode arch=compute_90a,code=sm_90a -Ikernels/include \\
        -DFA_SASS_FP16_ONLY=1 [-DFA_EXP_P_SMEM_D64=1 [-DFA_EXP_P_STSM=1]] -cubin \\
        kernels/knockouts/52_three_wgs_queue_causal_d64.cu -o x.cubin && cuobjdump -sass x.cubin > x.sass
    python loop_counts.py x.sass
"""
import re, collections, sys
txt=open(sys.argv[1]).read()
parts=re.split(r'\n\s+Function : ', txt)
for f in parts[1:]:
    name=f.split('\n')[0]
    m=re.search(r'Li64ELN2fa14HopperTileKindE([34])ELb(\d)', name)
    if not m: continue
    lines=[l for l in f.split('\n') if re.match(r'\s+/\*[0-9a-f]{4,5}\*/',l)]
    addr=lambda l:int(re.match(r'\s+/\*([0-9a-f]+)\*/',l).group(1),16)
    seen=[]
    for l in lines:
        mm=re.search(r'\bBRA\b.*?(0x[0-9a-f]+)',l)
        if mm:
            t=int(mm.group(1),16); a=addr(l)
            if t<a and a-t>0x800:
                body=[x for x in lines if t<=addr(x)<=a]
                ops=collections.Counter(re.sub(r'^\s*/\*[0-9a-f]+\*/\s*(@!?U?P\w+\s+)?','',x).split()[0].split('.')[0] for x in body)
                if ops['HGMMA']==12 and ops['MUFU']==66:
                    print('kind',m.group(1),'queue',m.group(2),'loop n',len(body),{k:ops[k] for k in ('HGMMA','MUFU','STS','STSM','BAR','FENCE','F2FP','LOP3','IADD3','WARPGROUP')})
