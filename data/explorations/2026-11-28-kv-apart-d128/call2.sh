# Call 2: the draft's two ideas apart: step 48 (unmasked tiles in a loop of their own, on step 36) and
# step 49 (K and V released apart, on 48), each with 232 or 240 consumer registers; correctness grid, then timing.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128/exp.py
export EXP_CONFIGS='{"s36": ["uniform_descriptors", {}],
 "m48": ["unmasked_loop", {}],
 "m48_r240": ["unmasked_loop", {"FA_EXP_P24": 1, "FA_EXP_CMAX": 240}],
 "a49x2": ["kv_apart_d128", {"FA_EXP_P24": 1, "FA_EXP_CMAX": 240, "FA_TILE_BC_D128": 128, "FA_TILE_STAGES_D128": 2}],
 "a49x3": ["kv_apart_d128", {"FA_EXP_P24": 1, "FA_EXP_CMAX": 240, "FA_TILE_BC_D128": 128, "FA_TILE_STAGES_D128": 3}],
 "a49x2_232": ["kv_apart_d128", {"FA_TILE_BC_D128": 128, "FA_TILE_STAGES_D128": 2}]}'
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "8,16,512,128",
 "4,16,4096,128,causal", "1,16,16384,128,causal", "1,32,8192,128,causal,kv8,bf16", "4,32,2048,128,causal,kv8,bf16",
 "4,16,4096,64", "2,16,8192,64", "8,16,512,64", "4,16,4096,64,causal", "4,71,2048,64,causal,kv1,bf16", "4,12,2048,64,causal,bf16"]'
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt
timeout 400 python $X check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "built|check|FAIL" $OUT/check.txt | cut -c1-200
timeout $(( 570 - ($(date +%s)-T0) )) python $X time 1.2 > $OUT/time_1.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-600 $OUT/time_1.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
