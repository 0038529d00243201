"""The decode check (lab.measure.decode_check.check_decode_case: the fp32 reference, outputs poisoned with NaN,
every element, two calls bit-identical) on the cases the decode grid leaves out for step 68's spans: more than 32
sequences (the warp's scan of cache_lens goes past its first 32), many segments a span (short sequences), pairs
over many spans (batch 1 at 128k), 32 packed rows (the 32-row tile), a paged mixed batch, and the decode set's
mixed and batch-64 calls as they are timed. Exit 1 where a case fails.

    python spans_check.py step[,step]
"""
import sys

from lab import variants
from lab.kernels.decode import DecodeShape
from lab.measure.decode_check import check_decode_case

CASES = ["40,8,2,128,700,mixed", "200,8,8,64,100,q2,mixed,fp16", "1,32,8,128,131072", "33,32,4,128,2000,q4,mixed",
         "36,28,4,128,3000,q4,mixed,page64", "70,4,4,64,65,q4,mixed", "32,28,4,128,4096,mixed",
         "64,64,8,128,1024", "8,32,8,128,8192"]
failed = 0
for name in sys.argv[1].split(","):
    fn = variants.load(name)
    for i, spec in enumerate(CASES):
        r = check_decode_case(name, lambda q, k, v, lens, table, o, fn=fn: fn(q, k, v, lens, table, out=o),
                              DecodeShape.parse(spec), 100 + i)
        failed += not r["passed"]
        print(f"{name:<24} {spec:<34} {'passed' if r['passed'] else 'FAILED'} max_abs_err {r.get('max_abs_err')} "
              f"tolerance {r.get('tolerance')} error {str(r.get('error', ''))[:200]}", flush=True)
print("spans cases failed:", failed)
sys.exit(1 if failed else 0)
