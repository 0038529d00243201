# Step 58's GPU checks before it lands (2026-12-02): step58.patch applied on the device copy only, then the step's
# GPU tests, compute-sanitizer (memcheck, racecheck, synccheck) and step 58 against step 53, hot, paired rounds, at
# the shapes its header predicts for. The landing call of the next session repeats the tests with the committed patch
# and runs `make ablation`'s measuring stages.
# Predictions, written before the call (step 53's time over step 58's, the speedup):
#   read from (data/explorations/2026-12-02-launch-by-launch calls 5 and 7): (4, 16, 4096, 64) and (8, 16, 4096, 64)
#     1.004x-1.009x, GPT-2's and Falcon-7B's causal rows 1.003x-1.009x, (4, 16, 512, 64, causal) 1.02x-1.04x,
#     (8, 16, 512, 64) 1.005x-1.02x;
#   held out: (4, 16, 512, 64) and (16, 16, 1024, 64) 1.003x-1.03x, (16, 16, 2048, 64, causal) 1.000x-1.01x;
#   unchanged (0.997x-1.003x): (4, 16, 4096, 128), (1, 16, 16384, 128, causal), (8, 16, 512, 128).
# Every GPU test and sanitizer passes. At most TOTAL (270) s and the start; T_TESTS, T_SAN and SAN_TOOLS shorten it where
# less device time is left (the timing then gets what remains, or nothing).
C=data/checks/2026-12-02-step58-finite-max-d64-draft
source .whl/prelude.sh >/dev/null 2>&1
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
git apply $C/step58.patch || { echo "patch does not apply"; exit 1; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > $OUT/gpu.txt
T0=$(date +%s)
timeout ${T_TESTS:-240} python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k "finite_max_d64" > $OUT/log_gpu_tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s: $(tail -1 $OUT/log_gpu_tests.txt)"
timeout ${T_SAN:-120} python -m lab sanitize --variants finite_max_d64 --tools ${SAN_TOOLS:-memcheck,racecheck,synccheck} \
  --out $OUT/sanitize.json > $OUT/log_sanitize.txt 2>&1; echo "sanitize rc=$? $(( $(date +%s)-T0 )) s"; tail -4 $OUT/log_sanitize.txt
export EXP_CONFIGS='{"s53": ["two_stages_three_wgs_d64", {}], "s58": ["finite_max_d64", {}]}'
export EXP_SHAPES='["4,16,4096,64", "8,16,4096,64", "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16",
  "4,16,512,64,causal", "8,16,512,64", "4,16,512,64", "16,16,1024,64", "16,16,2048,64,causal",
  "4,16,4096,128", "1,16,16384,128,causal", "8,16,512,128"]'
timeout $(( ${TOTAL:-270} - ($(date +%s)-T0) )) python data/explorations/2026-11-28-kv-apart-d128/exp.py time 0.5 > $OUT/log_time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"; grep -v "^built" $OUT/log_time.txt | cut -c1-200
