#!/bin/bash
# Why does the multicast lose? mc2 against the same cluster launch and schedule with every CTA loading
# its own K/V (cl2: FA_EXP_MC_DECOUPLE=1); the cluster launch prints what occupancy it got.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/34_warp_release_d64.cu"#\#twin#' kernels/variants/manifest.toml
V=warp_release_d64
CF='{"base":["'$V'",{}], "mc2":["'$V'",{"FA_EXP_KV_MULTICAST":2,"FA_EXP_PRINT_GRID":1}], "cl2":["'$V'",{"FA_EXP_KV_MULTICAST":2,"FA_EXP_MC_DECOUPLE":1,"FA_EXP_PRINT_GRID":1}]}'
timeout 100 python .scratch/exp.py "$CF" "4,16,500,64;2,16,1000,64,causal,bf16;1,3,65,64;40,8,520,64" check 0.1 > $OUT/check.txt 2>&1; grep -E "built|check|FAIL|rror|cluster launch" $OUT/check.txt
timeout 150 python .scratch/exp.py "$CF" "4,16,4096,64;4,16,4096,64,causal;4,16,512,64;8,16,512,64;32,8,512,64;16,16,1024,64;2,16,8192,64" nocheck 1.0 2>&1 | grep -v "^built" | tee $OUT/exp.txt
