source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
sed -i 's#^twin = "knockouts/31_tma_store_d128.cu"#\#twin#' kernels/variants/manifest.toml
V=tma_store_d128
CF='{"base":["'$V'",{}],
"w2":["'$V'",{"FA_TILE_WGS_D64":2,"FA_EXP_D64_OVERLAP":1}],
"w2s4":["'$V'",{"FA_TILE_WGS_D64":2,"FA_EXP_D64_OVERLAP":1,"FA_TILE_STAGES_D64":4}],
"w2tma":["'$V'",{"FA_TILE_WGS_D64":2,"FA_EXP_D64_OVERLAP":1,"FA_EXP_TMA_O64":1}],
"w2tmas4":["'$V'",{"FA_TILE_WGS_D64":2,"FA_EXP_D64_OVERLAP":1,"FA_EXP_TMA_O64":1,"FA_TILE_STAGES_D64":4}],
"w2np":["'$V'",{"FA_TILE_WGS_D64":2,"FA_EXP_D64_OVERLAP":1,"FA_EXP_NO_PINGPONG":1}],
"w3b64":["'$V'",{"FA_TILE_WGS_D64":3,"FA_EXP_D64_OVERLAP":1,"FA_TILE_BC_D64":64,"FA_TILE_STAGES_D64":4}],
"w3b64np":["'$V'",{"FA_TILE_WGS_D64":3,"FA_EXP_D64_OVERLAP":1,"FA_TILE_BC_D64":64,"FA_TILE_STAGES_D64":4,"FA_EXP_NO_PINGPONG":1}]}'
python .scratch/exp.py "$CF" "3,3,777,64,causal;1,4,100,64;2,5,1000,64;3,6,555,64,causal,kv3,bf16;2,8,300,64,kv1" check 0.2 2>&1 | grep -E "built|check|FAIL|rror" | tee $OUT/check.txt
python .scratch/exp.py "$CF" "4,16,512,64;8,16,512,64;32,8,512,64;1,8,512,64;4,16,512,64,causal;8,16,512,64,causal;1,8,512,64,causal;4,16,4096,64;4,16,4096,64,causal;64,16,256,64;16,16,1024,64;8,16,2048,64;2,16,8192,64;1,16,16384,64;4,71,2048,64,causal,kv1,bf16;1,71,8192,64,causal,kv1,bf16;4,12,2048,64,causal,bf16;1,12,8192,64,causal,bf16" nocheck 1.5 2>&1 | grep -v "^built" | tee $OUT/exp1.txt
