#!/bin/bash
# where the three-CTA configuration spills: SASS of the D = 64 short-tile kernel (fp16)
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH
NVCC=$(python -c "from lab.kernels.build import nvcc_path; print(nvcc_path())")
BIN=$(dirname $NVCC); ls $BIN | tr '\n' ' ' > $OUT/bin.txt
INC="-Ikernels/include $(python -c "import torch.utils.cpp_extension as c, sysconfig;print(' '.join('-I'+p for p in c.include_paths()+[sysconfig.get_paths()['include']]))")"
for cfg in "c3x:-DFA_TILE_CTAS_D64=3 -DFA_TILE_STAGES_D64=2 -DFA_EXP_SPLIT_SS=1" "ps3:-DFA_EXP_P_SMEM=1 -DFA_TILE_CTAS_D64=3 -DFA_TILE_STAGES_D64=2 -DFA_EXP_SPLIT_SS=1"; do
  name=${cfg%%:*}; defs=${cfg#*:}
  $NVCC -cubin -arch=sm_90a -O3 -lineinfo -std=c++17 $INC $defs kernels/variants/32_wide_kv_tiles_long_d64.cu -o /tmp/$name.cubin 2>&1 | tail -2
  $BIN/cuobjdump -sass -fun '_ZN61_GLOBAL__N__1291154b_28_32_wide_kv_tiles_long_d64_cu_b40008eb13attention_fwdI6__halfLi64ELb0EEEvPT_14CUtensorMap_stS4_S4_S4_N2fa9AttnShapeE' /tmp/$name.cubin > $OUT/$name.sass 2>&1 || $BIN/cuobjdump -sass /tmp/$name.cubin > $OUT/${name}_all.sass
  $BIN/nvdisasm -g -c /tmp/$name.cubin 2>&1 | gzip > $OUT/${name}_lines.txt.gz || true
  grep -c "STL\|LDL" $OUT/$name.sass
done
ls -la $OUT
