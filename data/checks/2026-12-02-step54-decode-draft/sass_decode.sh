#!/bin/bash
# compile decode steps 44-47 and 54 of tree $1 (main with a version of step54.patch applied) for sm_90a into /tmp/sasscmp/$2/<file>.sass (anonymous-namespace hash removed)
T=$1; OUT=/tmp/sasscmp/$2; mkdir -p $OUT
CUOBJ=/work/main/.venv/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump
ls $T/kernels/variants/4[4-7]_*.cu $T/kernels/variants/54_*.cu | xargs -P 2 -I{} bash -c '
  f={}; b=$(basename $f .cu)
  /usr/local/cuda/bin/nvcc -std=c++17 -O3 --expt-relaxed-constexpr -gencode arch=compute_90a,code=sm_90a -I'$T'/kernels/include -cubin $f -o '$OUT'/$b.cubin 2>'$OUT'/$b.err && '$CUOBJ' -sass '$OUT'/$b.cubin | sed -E "s/_GLOBAL__N__[0-9a-f_]+//g" > '$OUT'/$b.sass'
echo done $2; ls $OUT/*.sass | wc -l
