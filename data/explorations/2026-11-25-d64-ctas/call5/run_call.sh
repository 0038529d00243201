#!/bin/bash
# exploration call 5: three CTAs per SM at D = 64 with the row-limit mask (no spills), against step 32
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/32_wide_kv_tiles_long_d64.cu"#\#twin#' kernels/variants/manifest.toml
V=wide_kv_tiles_long_d64
L=1073741824
C3='"FA_TILE_CTAS_D64":3,"FA_TILE_BC_D64":128,"FA_TILE_STAGES_D64":2,"FA_EXP_SPLIT_SS":1'
CF='{"base":["'$V'",{}],
"c3x":["'$V'",{'$C3'}],
"c3r":["'$V'",{'$C3',"FA_EXP_ROW_LIMIT":1}],
"c3rL":["'$V'",{'$C3',"FA_EXP_ROW_LIMIT":1,"FA_TILE_LONG_S_D64":8192}]}'
timeout 240 python .scratch/exp.py "$CF" "3,3,777,64,causal;1,4,100,64;2,5,1000,64;3,6,555,64,causal,kv3,bf16;2,8,300,64,kv1;1,2,2000,64,causal;1,2,4097,64;1,3,4100,64,causal,kv1,bf16;2,2,193,64,causal;1,2,96,64;2,3,97,64,causal,bf16;1,2,5000,64,causal,kv2" check 0.2 2>&1 | grep -E "built|check|FAIL|rror" | tee $OUT/check.txt
timeout 280 python .scratch/exp.py "$CF" "4,16,512,64;8,16,512,64;32,8,512,64;32,16,512,64;16,16,512,64;32,16,512,64,causal;16,16,512,64,causal;8,16,512,64,causal;2,16,1024,64;4,16,1024,64;8,16,1024,64;16,16,1024,64;16,16,1024,64,causal;1,16,2048,64;2,16,2048,64;8,16,2048,64;8,16,2048,64,causal;4,71,2048,64,causal,kv1,bf16;4,12,2048,64,causal,bf16;1,16,4096,64;2,16,4096,64;4,16,4096,64;4,16,4096,64,causal;2,16,8192,64;1,71,8192,64,causal,kv1,bf16" nocheck 0.8 2>&1 | grep -v "^built" | tee $OUT/exp5.txt
