# Call 4 (issue 46, D = 128, for a later step): call 2 found that at D = 64 the consumer's register budget moves
# the speed 3-4 % with the same main loop. Does it at D = 128? Step 49 with the D = 128 tile's producer
# registers as a define (FA_EXP_PD128, this machine's copy only; the consumers get what is left, at most 240):
# 24 (consumer 240, FA3's split), 40 (232, step 49 as committed), 56 (224), 72 (216); no spills at any (ptxas).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
sed -i 's/hopper_producer_registers(hopper_consumer_warpgroups(D), TMA_KV), Elem>;/(D == 128 \&\& TMA_KV ? FA_EXP_PD128 : hopper_producer_registers(hopper_consumer_warpgroups(D), TMA_KV)), Elem>;/' kernels/include/fa/tile_size.cuh
sed -i 's/^namespace fa {/#ifndef FA_EXP_PD128\n#define FA_EXP_PD128 40\n#endif\nnamespace fa {/' kernels/include/fa/tile_size.cuh
grep -n "FA_EXP_PD128" kernels/include/fa/tile_size.cuh
export EXP_CONFIGS='{"s49": ["three_warpgroups_d64", {}], "c240": ["three_warpgroups_d64", {"FA_EXP_PD128": 24}],
 "c224": ["three_warpgroups_d64", {"FA_EXP_PD128": 56}], "c216": ["three_warpgroups_d64", {"FA_EXP_PD128": 72}]}'
export EXP_SHAPES='["4,16,4096,128", "4,16,4096,128,causal", "1,16,16384,128", "16,16,1024,128", "1,32,8192,128,causal,kv8,bf16", "4,32,2048,128,causal,kv8,bf16"]'
timeout 200 python $X/exp.py time 0.5 > $OUT/time_pd128.txt 2>&1; echo "time rc=$?"
cut -c1-420 $OUT/time_pd128.txt | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
