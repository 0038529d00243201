#!/bin/bash
# exploration call 6: the row-limit mask alone (two CTAs), and three CTAs at S = 256
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/32_wide_kv_tiles_long_d64.cu"#\#twin#' kernels/variants/manifest.toml
V=wide_kv_tiles_long_d64
C3='"FA_TILE_CTAS_D64":3,"FA_TILE_BC_D64":128,"FA_TILE_STAGES_D64":2,"FA_EXP_SPLIT_SS":1'
CF='{"base":["'$V'",{}],
"r":["'$V'",{"FA_EXP_ROW_LIMIT":1}],
"c3r":["'$V'",{'$C3',"FA_EXP_ROW_LIMIT":1}]}'
timeout 280 python .scratch/exp.py "$CF" "64,16,256,64;128,16,256,64;64,16,256,64,causal;128,16,256,64,causal;4,16,512,64,causal;1,8,512,64;1,8,512,64,causal;8,16,512,64;16,16,1024,64,causal;8,16,2048,64,causal;4,16,4096,64,causal;2,16,8192,64,causal;4,16,4096,128,causal;16,16,1024,128,causal;2,16,8192,128,causal;4,16,512,128,causal;4,32,2048,128,causal,kv8,bf16" nocheck 0.8 2>&1 | tee $OUT/exp6.txt
