# Call 5 (the warm machine of call 4, its builds cached): step 48 against three consumer warpgroups at D = 64 at
# nine more shapes, to see where 192 rows a CTA pay. What ran (one command line):
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
export EXP_CONFIGS='{"m48": ["unmasked_loop", {}], "w3": ["unmasked_loop", {"FA_TILE_WGS_D64": 3, "FA_TILE_LONG_S_D64": 1073741824, "FA_TILE_THREE_S_MAX_D64": 0}]}'
export EXP_SHAPES='["4,16,2048,64", "8,16,2048,64", "1,16,16384,64", "2,16,8192,64,causal", "1,16,16384,64,causal", "4,16,2048,64,causal", "16,16,1024,64,causal", "8,32,4096,64", "4,32,4096,64,causal"]'
timeout 110 python data/explorations/2026-11-28-kv-apart-d128/exp.py time 0.6 > $OUT/time_w3b.txt 2>&1
