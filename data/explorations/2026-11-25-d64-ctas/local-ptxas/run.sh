#!/bin/bash
# On the CPU machine (no GPU): ptxas's register and spill report of step 32 with knobs.patch applied,
# for three CTAs per SM at D = 64 with the masked softmax as written and with the row-limit mask.
# Run from a checkout of f6a3c96 with ../knobs.patch applied; INC = torch's and Python's include dirs.
C3="-DFA_TILE_CTAS_D64=3 -DFA_TILE_STAGES_D64=2 -DFA_EXP_SPLIT_SS=1"
for cfg in "c3x:$C3" "c3x_row_limit:$C3 -DFA_EXP_ROW_LIMIT=1" "c2_cap136_row_limit:-DFA_EXP_CONSUMER_REGS=136 -DFA_EXP_ROW_LIMIT=1" "c2_cap136:-DFA_EXP_CONSUMER_REGS=136"; do
  echo "== ${cfg%%:*} (${cfg#*:})"
  nvcc -cubin -arch=sm_90a -O3 -std=c++17 -Ikernels/include $INC ${cfg#*:} kernels/variants/32_wide_kv_tiles_long_d64.cu \
       -o /tmp/k.cubin -Xptxas -v 2>&1 | grep -E "Compiling entry|registers|spill" | sed 's/_ZN61_GLOBAL__N__[0-9a-f_]*wide_kv_tiles_long_d64_cu_[0-9a-f]*//'
done
