#!/bin/bash
# One ring release a consumer warp instead of a thread (FA_EXP_WARP_RELEASE).
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/33_three_ctas_d64.cu"#\#twin#' kernels/variants/manifest.toml
V=three_ctas_d64
CF='{"base":["'$V'",{}], "wrel":["'$V'",{"FA_EXP_WARP_RELEASE":1}]}'
timeout 120 python .scratch/exp.py "$CF" "2,16,1000,128;1,16,777,128,causal;2,32,500,128,kv8,bf16;3,8,2049,128,causal,kv2;4,16,500,64;2,16,1000,64,causal,bf16;1,32,4097,64,causal;8,16,1000,64;2,8,8200,64,causal" check 0.2 2>&1 | grep -E "built|check|FAIL|rror" | tee $OUT/check.txt
timeout 200 python .scratch/exp.py "$CF" "4,16,4096,128;1,16,16384,128;16,16,1024,128;32,16,512,128;64,16,256,128;4,16,4096,128,causal;1,64,8192,128,causal,kv8,bf16;4,16,4096,64;8,16,512,64;4,16,512,64;32,8,512,64;2,16,8192,64;4,16,4096,64,causal;4,71,2048,64,causal,kv1,bf16" nocheck 1.0 2>&1 | grep -v "^built" | tee $OUT/exp.txt
