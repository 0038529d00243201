# Call 4 (the session's last device seconds): at D = 64, one CTA an SM with two or three consumer warpgroups
# (128 or 192 query rows sharing each K/V tile, FA3's 192 rows) against step 48's one warpgroup a CTA, two or
# three CTAs an SM. Tile constants only (FA_TILE_WGS_D64, the long and three-CTA tiles turned off so every D = 64
# call takes the 128-key tile in three stages); wgs64=3 is outside the tuning space ([1, 2]).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
D=data/explorations/2026-11-28-kv-apart-d128
T0=$(date +%s)
export EXP_CONFIGS='{"m48": ["unmasked_loop", {}],
 "w2": ["unmasked_loop", {"FA_TILE_WGS_D64": 2, "FA_TILE_LONG_S_D64": 1073741824, "FA_TILE_THREE_S_MAX_D64": 0}],
 "w3": ["unmasked_loop", {"FA_TILE_WGS_D64": 3, "FA_TILE_LONG_S_D64": 1073741824, "FA_TILE_THREE_S_MAX_D64": 0}]}'
export EXP_SHAPES='["4,16,4096,64", "2,16,8192,64", "16,16,1024,64", "4,16,512,64", "8,16,512,64", "4,16,4096,64,causal",
 "4,71,2048,64,causal,kv1,bf16", "1,12,8192,64,causal,bf16"]'
timeout 120 python $D/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "built|check|FAIL" $OUT/check.txt | cut -c1-200
timeout 60 python $D/exp.py time 0.8 > $OUT/time_w.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-400 $OUT/time_w.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
