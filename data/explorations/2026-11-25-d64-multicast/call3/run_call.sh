#!/bin/bash
# call2 deadlocked in cl2 (its ring still counted both CTAs' warps); fixed, a shorter set.
# its own K/V (cl2: FA_EXP_MC_DECOUPLE=1); the cluster launch prints what occupancy it got.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/34_warp_release_d64.cu"#\#twin#' kernels/variants/manifest.toml
V=warp_release_d64
CF='{"base":["'$V'",{}], "mc2":["'$V'",{"FA_EXP_KV_MULTICAST":2,"FA_EXP_PRINT_GRID":1}], "cl2":["'$V'",{"FA_EXP_KV_MULTICAST":2,"FA_EXP_MC_DECOUPLE":1,"FA_EXP_PRINT_GRID":1}]}'
timeout 60 python .scratch/exp.py "$CF" "4,16,500,64;2,16,1000,64,causal,bf16;40,8,520,64" check 0.1 > $OUT/check.txt 2>&1; grep -E "built|check|FAIL|rror|cluster launch" $OUT/check.txt
timeout 120 python .scratch/exp.py "$CF" "4,16,4096,64;4,16,512,64;8,16,512,64;32,8,512,64;2,16,8192,64" nocheck 0.7 2>&1 | grep -v "^built" | tee $OUT/exp.txt
