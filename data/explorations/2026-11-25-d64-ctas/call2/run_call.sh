#!/bin/bash
# exploration call 2: three CTAs per SM at D = 64 with 96-key tiles (no spills) against 128-key tiles
# as two N = 64 wgmmas (72 B spilled), at every S (L: the short tile also at S >= 4096)
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
sed -i 's#^twin = "knockouts/32_wide_kv_tiles_long_d64.cu"#\#twin#' kernels/variants/manifest.toml
V=wide_kv_tiles_long_d64
L=1073741824
CF='{"base":["'$V'",{}],
"c3x":["'$V'",{"FA_TILE_CTAS_D64":3,"FA_TILE_BC_D64":128,"FA_TILE_STAGES_D64":2,"FA_EXP_SPLIT_SS":1}],
"c3b96":["'$V'",{"FA_TILE_CTAS_D64":3,"FA_TILE_BC_D64":96,"FA_TILE_STAGES_D64":2}],
"c3xL":["'$V'",{"FA_TILE_CTAS_D64":3,"FA_TILE_BC_D64":128,"FA_TILE_STAGES_D64":2,"FA_EXP_SPLIT_SS":1,"FA_TILE_LONG_S_D64":'$L'}],
"c3b96L":["'$V'",{"FA_TILE_CTAS_D64":3,"FA_TILE_BC_D64":96,"FA_TILE_STAGES_D64":2,"FA_TILE_LONG_S_D64":'$L'}],
"c2b96s3":["'$V'",{"FA_TILE_BC_D64":96,"FA_TILE_STAGES_D64":3}]}'
timeout 220 python .scratch/exp.py "$CF" "3,3,777,64,causal;1,4,100,64;2,5,1000,64;3,6,555,64,causal,kv3,bf16;2,8,300,64,kv1;1,2,2000,64,causal;1,2,4097,64;1,3,4100,64,causal,kv1,bf16;2,2,193,64,causal;1,2,96,64;2,3,97,64,causal,bf16" check 0.2 2>&1 | grep -E "built|check|FAIL|rror" | tee $OUT/check.txt
timeout 200 python .scratch/exp.py "$CF" "4,16,512,64;8,16,512,64;32,8,512,64;32,16,512,64;1,8,512,64;4,16,512,64,causal;8,16,512,64,causal;64,16,256,64;16,16,1024,64;16,16,1024,64,causal;8,16,1024,64;8,16,2048,64;8,16,2048,64,causal;4,71,2048,64,causal,kv1,bf16;4,12,2048,64,causal,bf16;4,16,4096,64;4,16,4096,64,causal;2,16,8192,64;1,16,16384,64;1,71,8192,64,causal,kv1,bf16;1,12,8192,64,causal,bf16" nocheck 1.0 2>&1 | grep -v "^built" | tee $OUT/exp2.txt
