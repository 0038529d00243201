#!/bin/bash
# compile every variant and twin in tree $1 for sm_90a into /tmp/sasscmp/$2/<file>.sass
T=$1; OUT=/tmp/sasscmp/$2; mkdir -p $OUT
CUOBJ=/work/main/.venv/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump
ls $T/kernels/variants/*.cu $T/kernels/knockouts/*.cu | xargs -P 2 -I{} bash -c '
  f={}; b=$(basename $(dirname $f))_$(basename $f .cu)
  /usr/local/cuda/bin/nvcc -std=c++17 -O3 --expt-relaxed-constexpr -gencode arch=compute_90a,code=sm_90a -I'$T'/kernels/include -cubin $f -o /tmp/sasscmp/'$2'/$b.cubin 2>/tmp/sasscmp/'$2'/$b.err && '$CUOBJ' -sass /tmp/sasscmp/'$2'/$b.cubin | sed -E "s/_GLOBAL__N__[0-9a-f_]+//g" > /tmp/sasscmp/'$2'/$b.sass'
echo done $2
