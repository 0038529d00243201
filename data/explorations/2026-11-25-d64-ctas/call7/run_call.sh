#!/bin/bash
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/33_three_ctas_d64.cu"#\#twin#' kernels/variants/manifest.toml
V=three_ctas_d64
CF='{"base":["'$V'",{}],
"tw":["'$V'",{"FA_EXP_TWO_WG_SMALL":1}],
"tw2":["'$V'",{"FA_EXP_TWO_WG_SMALL":1,"FA_EXP_TWO_WG_STAGES":2}],
"twm1":["'$V'",{"FA_EXP_TWO_WG_SMALL":1,"FA_EXP_TWO_WG_MIN_TILES_PER_SM":1}]}'
timeout 240 python .scratch/exp.py "$CF" "4,16,500,64;4,16,500,64,causal;2,32,777,64,kv8,bf16;3,24,300,64,causal,kv1;2,16,1000,64,causal,bf16;8,8,129,64;1,16,1000,64,causal" check 0.2 2>&1 | grep -E "built|check|FAIL|rror" | tee $OUT/check.txt
timeout 280 python .scratch/exp.py "$CF" "1,8,512,64;2,16,512,64;1,16,1024,64;4,16,512,64;8,16,512,64;4,16,512,64,causal;8,16,512,64,causal;2,16,1024,64;4,16,1024,64;1,16,2048,64;2,16,2048,64;4,12,1024,64,causal,bf16;32,8,512,64" nocheck 0.8 2>&1 | grep -v "^built" | tee $OUT/exp.txt
