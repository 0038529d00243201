#!/bin/bash
# exploration call 3: D = 64 without a producer warpgroup (the consumer warpgroup loads for itself),
# three CTAs per SM of 128 threads at 168 registers, against step 32 as written
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/32_wide_kv_tiles_long_d64.cu"#\#twin#' kernels/variants/manifest.toml
V=wide_kv_tiles_long_d64
L=1073741824
CF='{"base":["'$V'",{}],
"self":["'$V'",{"FA_EXP_SELF_LOAD":1}],
"selfall":["'$V'",{"FA_EXP_SELF_LOAD":1,"FA_TILE_SELF_S_MIN_D64":1,"FA_TILE_SELF_S_MAX_D64":'$L'}],
"self2s3":["'$V'",{"FA_EXP_SELF_LOAD":1,"FA_TILE_SELF_S_MIN_D64":1,"FA_TILE_SELF_S_MAX_D64":'$L',"FA_TILE_SELF_CTAS_D64":2,"FA_TILE_SELF_STAGES_D64":3}],
"self2b192":["'$V'",{"FA_EXP_SELF_LOAD":1,"FA_TILE_SELF_S_MIN_D64":1,"FA_TILE_SELF_S_MAX_D64":'$L',"FA_TILE_SELF_CTAS_D64":2,"FA_TILE_SELF_BC_D64":192}]}'
timeout 240 python .scratch/exp.py "$CF" "3,3,777,64,causal;1,4,100,64;2,5,1000,64;3,6,555,64,causal,kv3,bf16;2,8,300,64,kv1;1,2,2000,64,causal;1,2,4097,64;1,3,4100,64,causal,kv1,bf16;2,2,193,64,causal;1,2,1500,64,causal;2,3,1100,64;2,4,2500,64,causal,kv2,bf16;40,4,1030,64" check 0.2 2>&1 | grep -E "built|check|FAIL|rror" | tee $OUT/check.txt
timeout 200 python .scratch/exp.py "$CF" "4,16,512,64;8,16,512,64;32,8,512,64;32,16,512,64;1,8,512,64;4,16,512,64,causal;8,16,512,64,causal;64,16,256,64;16,16,1024,64;16,16,1024,64,causal;8,16,1024,64;8,16,2048,64;8,16,2048,64,causal;4,71,2048,64,causal,kv1,bf16;4,12,2048,64,causal,bf16;4,16,4096,64;4,16,4096,64,causal;2,16,8192,64;1,16,16384,64;1,71,8192,64,causal,kv1,bf16;1,12,8192,64,causal,bf16" nocheck 1.0 2>&1 | grep -v "^built" | tee $OUT/exp3.txt
