# Device call 1 of data/explorations/2026-12-04-wide-key-tiles-step62 (issue 46), prepared 2026-12-04 on the CPU machine
# after the session's device time was spent: NOT YET RUN. Run from the repository root with carry [".whl", ".fa3"].
# Step 62 trails FA3 by 0.9-2.4 % hot at the long D = 128 rows (its recorded run). FA3's non-causal D = 128 kernel
# takes 128 x 176 tiles in 2 stages, ours 128 x 128 in 3. At step 48 wider tiles spilled (608-1216 B) and lost at
# S <= 4096 (../2026-11-28-kv-apart-d128); step 62's loop is leaner. explore.patch adds an m64n48k16 wrapper so that
# N = 176 is 128 + 48 (as 192 is 128 + 64), FA_EXP_P24 (the TMA producer at 24 registers beside two consumer
# warpgroups) and FA_EXP_CMAX (the consumers' ceiling, 232 by default). With the macros off the step's SASS is
# unchanged (checked). paths.txt: the D = 128 loop's shortest path per 128 keys 414 (s62) -> 396.4 (176 keys)
# -> 388.7 (192 keys, 240 registers); no local loads or stores on the path; 8-14 B of spills elsewhere in the static
# list's kernel (none in the counter's).
# Predictions (hot, paired rounds, s62 over each), written before the call:
# - t128s2 (two stages of 128 keys, the control) 0.99x-1.005x everywhere;
# - t176 1.01x-1.04x at (4, 16, 4096, 128), (2, 16, 8192, 128) and (1, 16, 16384, 128); 0.90x-0.99x at
#   (16, 16, 1024, 128) and (8, 16, 512, 128) (a 176-key tail tile, two stages); 0.95x-1.01x at the causal rows;
#   1.00x at D = 64 (unchanged kernels); passes rare_path.py and the grid;
# - t176r 0.005-0.02 above t176 at the long rows: at 232 registers ptxas waits for P V before any of the softmax
#   (paths.txt: no exponential, FFMA or FMUL above the wait), at 240 it takes the scaling FFMAs and most maxima
#   above it, as step 62 does (revised before the call, from paths.txt's orders; first written "within 0.005");
# - t192r within 0.01 of t176 at the long rows, below it at S <= 1024.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-kv-apart-step61
N=data/explorations/2026-12-04-wide-key-tiles-step62
git apply --check -R $N/explore.patch 2>/dev/null || git apply $N/explore.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s62": ["rescale_under_s", {"FA_EXP_P24": 0}],
  "t128s2": ["rescale_under_s", {"FA_TILE_STAGES_D128": 2}],
  "t176": ["rescale_under_s", {"FA_TILE_BC_D128": 176, "FA_TILE_STAGES_D128": 2}],
  "t176r": ["rescale_under_s", {"FA_TILE_BC_D128": 176, "FA_TILE_STAGES_D128": 2, "FA_EXP_P24": 1, "FA_EXP_CMAX": 240}],
  "t192r": ["rescale_under_s", {"FA_TILE_BC_D128": 192, "FA_TILE_STAGES_D128": 2, "FA_EXP_P24": 1, "FA_EXP_CMAX": 240}]}'
timeout 120 python $E/rare_path.py > $OUT/rare_path.txt 2>&1; echo "rare rc=$? $(( $(date +%s)-T0 )) s"
grep -v "^built" $OUT/rare_path.txt | cut -c1-220
timeout 120 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|BUILD" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "8,16,512,128",
  "4,16,4096,128,causal", "1,16,16384,128,causal", "16,16,1024,128,causal", "1,32,8192,128,causal,kv8,bf16",
  "4,32,2048,128,causal,kv8,bf16", "4,16,4096,64,causal", "4,16,4096,64"]'
timeout ${TIME_END:-300} python $X/exp.py time 1.5 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
