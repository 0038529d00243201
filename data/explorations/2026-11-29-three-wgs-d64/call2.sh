# Call 2: why step 49 gains 4-6 % where call 4-5's tile constants on step 48 (w3) gained 9-11 % at the same
# shapes. The two differ in the producer's registers (step 49's tile: 24, so a consumer has 160; w3: 40 and
# 152). Step 49 built with the producer's registers as a define (FA_EXP_P3, this machine's copy only), beside w3.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
sed -i 's/TMA_KV ? 24 : 56, Elem>;/TMA_KV ? FA_EXP_P3 : 56, Elem>;/' kernels/include/fa/tile_size.cuh
sed -i 's/^namespace fa {/#ifndef FA_EXP_P3\n#define FA_EXP_P3 24\n#endif\nnamespace fa {/' kernels/include/fa/tile_size.cuh
grep -n "FA_EXP_P3" kernels/include/fa/tile_size.cuh
export EXP_CONFIGS='{"s49": ["three_warpgroups_d64", {}], "p32": ["three_warpgroups_d64", {"FA_EXP_P3": 32}], "p40": ["three_warpgroups_d64", {"FA_EXP_P3": 40}],
 "w3": ["unmasked_loop", {"FA_TILE_WGS_D64": 3, "FA_TILE_LONG_S_D64": 1073741824, "FA_TILE_THREE_S_MAX_D64": 0}]}'
export EXP_SHAPES='["4,16,4096,64", "1,16,16384,64", "8,32,4096,64", "6,16,2048,64"]'
timeout 240 python $X/exp.py time 0.6 > $OUT/time_p3.txt 2>&1; echo "time rc=$?"
cut -c1-400 $OUT/time_p3.txt | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
