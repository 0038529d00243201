#!/bin/bash
# compile the given files (relative to kernels/) in trees A and B for sm_90a; compare each cubin's SASS bodies in order
A=$1; B=$2; shift 2
CUOBJ=/work/main/.venv/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump
mkdir -p /tmp/s52/cmp
for f in "$@"; do
  n=$(echo $f | tr / _ | sed 's/.cu$//')
  for t in A B; do
    T=$([ $t = A ] && echo $A || echo $B)
    /usr/local/cuda/bin/nvcc -std=c++17 -O3 --expt-relaxed-constexpr -gencode arch=compute_90a,code=sm_90a -I$T/kernels/include -cubin $T/kernels/$f -o /tmp/s52/cmp/$n.$t.cubin 2>/dev/null || echo "BUILD FAIL $t $f"
    $CUOBJ -sass /tmp/s52/cmp/$n.$t.cubin | grep -E "^\s+/\*[0-9a-f]{4,6}\*/" | sed -E 's@/\*[0-9a-f]{4,6}\*/@@; s@;.*@@; s/_GLOBAL__N__[0-9a-f_]+//g' > /tmp/s52/cmp/$n.$t.sass
  done
  if cmp -s /tmp/s52/cmp/$n.A.sass /tmp/s52/cmp/$n.B.sass; then echo "same $f ($(wc -l < /tmp/s52/cmp/$n.A.sass) instructions)"; else echo "DIFFERS $f"; fi
done
