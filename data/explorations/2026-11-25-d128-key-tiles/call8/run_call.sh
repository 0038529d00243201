#!/bin/bash
# D = 128 key tiles of 144-176 keys (FlashAttention-3 takes 176 non-causal), consumers at 240 registers.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/33_three_ctas_d64.cu"#\#twin#' kernels/variants/manifest.toml
V=three_ctas_d64
R='"FA_EXP_PRODUCER_REGS_TMA_2WG":24,"FA_EXP_CONSUMER_REGISTERS_MAX":240'
CF='{"base":["'$V'",{}],
"r240":["'$V'",{'$R'}],
"b144":["'$V'",{'$R',"FA_TILE_BC_D128":144,"FA_TILE_STAGES_D128":2}],
"b160":["'$V'",{'$R',"FA_TILE_BC_D128":160,"FA_TILE_STAGES_D128":2}],
"b176":["'$V'",{'$R',"FA_TILE_BC_D128":176,"FA_TILE_STAGES_D128":2}]}'
timeout 200 python .scratch/exp.py "$CF" "2,16,1000,128;1,16,777,128,causal;2,32,500,128,kv8,bf16;3,8,2049,128,causal,kv2;1,4,145,128;1,4,176,128,causal;2,4,353,128,bf16" check 0.2 2>&1 | grep -E "built|check|FAIL|rror" | tee $OUT/check.txt
timeout 240 python .scratch/exp.py "$CF" "4,16,4096,128;1,16,16384,128;2,16,8192,128;16,16,1024,128;8,16,2048,128;32,16,512,128;64,16,256,128;4,16,4096,128,causal;16,16,1024,128,causal;4,32,2048,128,causal,kv8,bf16;1,64,8192,128,causal,kv8,bf16" nocheck 1.0 2>&1 | grep -v "^built" | tee $OUT/exp.txt
