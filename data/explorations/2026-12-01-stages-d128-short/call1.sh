# Issue 46, after step 53 (two K/V stages for the static three-warpgroup D = 64 tile: 1.009x-1.023x, the MIO-throttle
# stalls down a fifth, ../../checks/2026-12-01-h200-run-step53): do the other tiles' rings also run better at two?
# Step 53's twin with FA_TILE_STAGES_D128 = 2 (d128st2: the 128 x 128 ping-pong tile, 160 KB instead of 224) and
# with FA_TILE_STAGES_D64 = 2 (d64st2: the 64-row short tile, two CTAs an SM, and the counter's three-warpgroup
# tile, which ../2026-11-29-d64-stages found unchanged at two), against step 53, hot, paired rounds, after the
# correctness grid. The remaining device time of the session (about 300 s), so few shapes and short timing.
# Predictions, written before the call (speedup over step 53, time.txt's `s53/x` column):
#   d128st2: 0.97x-1.01x at the D = 128 shapes (the overlapped loop keeps two tiles in use while a third loads: a
#            two-stage ring leaves the producer no slot ahead, so it should run dry; the MIO effect may offset some);
#   d64st2: 0.99x-1.02x at the canonical S = 512 D = 64 shapes (kShort), 1.00x at (4, 16, 4096, 64) (step 53's tile
#           already at two) and at the D = 128 shape.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s53": ["two_stages_three_wgs_d64", {}], "d128st2": ["two_stages_three_wgs_d64", {"FA_TILE_STAGES_D128": 2}],
  "d64st2": ["two_stages_three_wgs_d64", {"FA_TILE_STAGES_D64": 2}]}'
export EXP_SHAPES='["4,16,4096,128", "4,16,4096,128,causal", "1,16,16384,128", "1,32,8192,128,causal,kv8,bf16",
  "4,16,512,64", "8,16,512,64", "4,16,512,64,causal", "4,16,4096,64"]'
timeout 100 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|FAILED|built|BUILD" $OUT/check.txt | cut -c1-200 | head -8
grep -qE "[1-9][0-9]* failed" $OUT/check.txt && { echo "a check failed: no timing"; exit 1; }
timeout $(( 150 - ($(date +%s)-T0) )) python $X/exp.py time 0.6 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-300 $OUT/time.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g' | sed -E 's/ s53=.*\| s53\/d128st2/ s53\/d128st2/'
