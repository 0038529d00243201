# Step 59's GPU checks before it lands (2026-12-02): step59.patch applied on the device copy only, then the step's
# GPU tests (it and its knock-outs), compute-sanitizer (memcheck, racecheck, synccheck; the sanitizer's shapes hold
# (1, 32, 4097, 64, causal, kv8, bf16), which takes the counter's three-warpgroup tile) and step 59 against step 58,
# hot, paired rounds. The landing call of the next session repeats the tests with the committed patch and runs
# `make ablation`'s measuring stages.
# Which shapes take the counter's three-warpgroup D = 64 tile (fa::takes_three_wg_queue_tile_causal_d64, 132 SMs):
# (4, 16, 4096), (2, 16, 8192), (1, 16, 16384), (2, 32, 4096), (1, 32, 8192), (1, 8, 16384), causal; the static
# list's: (8, 16, 4096, causal); (4, 16, 4096) non-causal and D = 128 other kernels.
# Predictions, written before the call (step 58's time over step 59's, the speedup):
#   read from (data/explorations/2026-12-02-launch-by-launch call 10): (4, 16, 4096, 64, causal) 1.005x-1.015x,
#     (2, 16, 8192, 64, causal) 1.004x-1.012x, (1, 16, 16384, 64, causal) 0.998x-1.006x;
#   held out: (2, 32, 4096, 64, causal) 1.005x-1.015x, (1, 32, 8192, 64, causal) 1.004x-1.012x, (1, 8, 16384, 64,
#     causal) 0.997x-1.006x;
#   unchanged (0.997x-1.003x; the same SASS): (8, 16, 4096, 64, causal), (4, 16, 4096, 64), (4, 16, 4096, 128).
# Every GPU test and sanitizer passes. At most TOTAL (400) s and the start; T_TESTS, T_SAN and SAN_TOOLS shorten it where
# less device time is left (the timing then gets what remains, or nothing).
C=data/checks/2026-12-02-step59-queue-overlap-d64-draft
source .whl/prelude.sh >/dev/null 2>&1
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
git apply $C/step59.patch || { echo "patch does not apply"; exit 1; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > $OUT/gpu.txt
T0=$(date +%s)
timeout ${T_TESTS:-220} python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k "queue_overlap_d64" > $OUT/log_gpu_tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s: $(tail -1 $OUT/log_gpu_tests.txt)"
timeout ${T_SAN:-90} python -m lab sanitize --variants queue_overlap_d64 --tools ${SAN_TOOLS:-memcheck,racecheck,synccheck} \
  --out $OUT/sanitize.json > $OUT/log_sanitize.txt 2>&1; echo "sanitize rc=$? $(( $(date +%s)-T0 )) s"; tail -4 $OUT/log_sanitize.txt
export EXP_CONFIGS='{"s58": ["finite_max_d64", {}], "s59": ["queue_overlap_d64", {}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "2,16,8192,64,causal", "1,16,16384,64,causal", "2,32,4096,64,causal",
  "1,32,8192,64,causal", "1,8,16384,64,causal", "8,16,4096,64,causal", "4,16,4096,64", "4,16,4096,128"]'
timeout $(( ${TOTAL:-400} - ($(date +%s)-T0) )) python data/explorations/2026-11-28-kv-apart-d128/exp.py time 0.5 > $OUT/log_time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"; grep -v "^built" $OUT/log_time.txt | cut -c1-200
