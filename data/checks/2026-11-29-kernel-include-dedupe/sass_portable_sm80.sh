#!/bin/bash
T=$1; OUT=/tmp/sasscmp/$2; mkdir -p $OUT
CUOBJ=/work/main/.venv/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump
cat /tmp/portable.txt | xargs -P 2 -I{} bash -c '
  f='$T'/kernels/variants/{}; [ -f $f ] || f='$T'/kernels/{}; b=$(echo {} | tr / _ | sed s/.cu$//)
  /usr/local/cuda/bin/nvcc -std=c++17 -O3 --expt-relaxed-constexpr -gencode arch=compute_80,code=sm_80 -I'$T'/kernels/include -cubin $f -o '$OUT'/$b.cubin 2>'$OUT'/$b.err && '$CUOBJ' -sass '$OUT'/$b.cubin | sed -E "s/_GLOBAL__N__[0-9a-f_]+//g" > '$OUT'/$b.sass'
