#!/bin/bash
# call7's two consumer warpgroups at small non-causal D = 64 grids (S <= 512), on step 34 (knobs.patch).
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/34_warp_release_d64.cu"#\#twin#' kernels/variants/manifest.toml
V=warp_release_d64
CF='{"base":["'$V'",{}], "tw":["'$V'",{"FA_EXP_TWO_WG_SMALL":1}]}'
timeout 80 python .scratch/exp.py "$CF" "4,16,500,64;2,16,300,64,bf16;3,12,511,64,kv4;2,71,400,64,kv1,bf16;16,16,129,64;8,16,512,64,causal" check 0.1 2>&1 | grep -E "built|check|FAIL|rror" | tee $OUT/check.txt
timeout 150 python .scratch/exp.py "$CF" "2,16,512,64;4,16,512,64;8,16,512,64;16,16,256,64;4,32,384,64,kv8,bf16;6,12,512,64,bf16;1,8,512,64;8,16,512,64,causal" nocheck 1.0 2>&1 | grep -v "^built" | tee $OUT/exp.txt
