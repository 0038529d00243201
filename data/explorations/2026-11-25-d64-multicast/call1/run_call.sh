#!/bin/bash
# K/V multicast across a cluster of two CTAs at D = 64 (FA_EXP_KV_MULTICAST=2) on step 34.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
D=data/explorations/2026-11-25-d64-multicast/call1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/34_warp_release_d64.cu"#\#twin#' kernels/variants/manifest.toml
V=warp_release_d64
CF='{"base":["'$V'",{}], "mc2":["'$V'",{"FA_EXP_KV_MULTICAST":2}]}'
timeout 150 python .scratch/exp.py "$CF" "4,16,500,64;2,16,1000,64,causal,bf16;1,32,4097,64,causal;8,16,1000,64;2,8,8200,64,causal;1,2,129,64,causal;1,3,65,64;2,12,2047,64,causal,kv4;3,71,700,64,kv1,bf16;24,16,1000,64,causal;40,8,520,64;1,4,4100,64" check 0.2 2>&1 | grep -E "built|check|FAIL|rror|Error" | tee $OUT/check.txt
timeout 200 python .scratch/exp.py "$CF" "4,16,4096,64;4,16,4096,64,causal;1,8,512,64;4,16,512,64;8,16,512,64;32,8,512,64;16,16,1024,64;8,16,2048,64;32,16,512,64;64,16,256,64;2,16,8192,64;4,71,2048,64,causal,kv1,bf16;4,12,2048,64,causal,bf16" nocheck 1.0 2>&1 | grep -v "^built" | tee $OUT/exp.txt
