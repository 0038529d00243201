#!/bin/bash
# K and V released apart in the ring (FA_EXP_SPLIT_KV), so that two stages might feed D = 128.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/33_three_ctas_d64.cu"#\#twin#' kernels/variants/manifest.toml
V=three_ctas_d64
R='"FA_EXP_PRODUCER_REGS_TMA_2WG":24,"FA_EXP_CONSUMER_REGISTERS_MAX":240'
CF='{"base":["'$V'",{}],
"st2":["'$V'",{"FA_TILE_STAGES_D128":2}],
"split":["'$V'",{"FA_EXP_SPLIT_KV":1}],
"split_st2":["'$V'",{"FA_EXP_SPLIT_KV":1,"FA_TILE_STAGES_D128":2}],
"split_b144":["'$V'",{"FA_EXP_SPLIT_KV":1,'$R',"FA_TILE_BC_D128":144,"FA_TILE_STAGES_D128":2}],
"split_b176":["'$V'",{"FA_EXP_SPLIT_KV":1,'$R',"FA_TILE_BC_D128":176,"FA_TILE_STAGES_D128":2}]}'
timeout 150 python .scratch/exp.py "$CF" "2,16,1000,128;1,16,777,128,causal;2,32,500,128,kv8,bf16;3,8,2049,128,causal,kv2;1,4,145,128;4,16,500,64;2,16,1000,64,causal,bf16;1,32,4097,64,causal" check 0.2 2>&1 | grep -E "built|check|FAIL|rror" | tee $OUT/check.txt
timeout 200 python .scratch/exp.py "$CF" "4,16,4096,128;1,16,16384,128;16,16,1024,128;32,16,512,128;64,16,256,128;4,16,4096,128,causal;16,16,1024,128,causal;1,64,8192,128,causal,kv8,bf16;4,16,4096,64;8,16,512,64" nocheck 0.8 2>&1 | grep -v "^built" | tee $OUT/exp.txt
