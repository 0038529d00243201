# Device call 1 for step 63 (counter_tile_causal_d64), from the repository root with step63.patch (the draft, git show
# 639a0d5) applied and committed (the GPU tests run on the committed sources), carry [".whl", ".fa3"]. PREPARED
# 2026-12-04; ran as call 1 the same day with CHECKS=0 (call1/).
# 1. The step's GPU tests (the correctness grid, fp32 reference, poisoned outputs, every element) and
#    compute-sanitizer (memcheck, racecheck, synccheck), as lab/studies/landing/land.sh runs them.
# 2. Step 63 over step 62, hot, paired rounds (../../explorations/2026-11-28-kv-apart-d128/exp.py), at the rows that
#    change and the rule's edges. Predictions, written before the call:
#    - Falcon-7B (1, 71, 8192, 64, causal, 1 K/V head, bf16) 1.06x-1.09x, GPT-2 (1, 12, 8192, 64, causal, bf16)
#      1.035x-1.065x, (1, 71, 4096, 64, causal, 1 K/V head, bf16) 1.04x-1.08x, (2, 12, 8192, 64, causal, bf16)
#      1.03x-1.06x (the exploration's q4 measured 1.077-1.079x, 1.050-1.051x, 1.061x, 1.044x);
#    - the new edge: (1, 12, 4096, 64, causal) (264 tiles, 2 an SM: step 51's static pairs before, one full round)
#      0.97x-1.05x; (1, 10, 8192, 64, causal) (430 tiles: step 62 gives it step 50's tiles, the pairs 83 % full)
#      0.97x-1.08x; (1, 11, 4096, 64, causal) (242 tiles: unchanged) 1.00x within 0.003;
#    - (4, 16, 4096, 64, causal), (2, 16, 8192, 64, causal) (step 52's tile already; the counter from 2 tiles a CTA
#      instead of 4 changes nothing there: 1408 and 1376 tiles) and the non-causal (4, 16, 4096, 64): 1.00x within
#      0.003.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
# CHECKS=0 leaves part 1 to the landing (lab/studies/landing/land.sh runs the same tests and sanitizers before the run).
if [ "${CHECKS:-1}" = 1 ]; then
  timeout 300 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py \
    tests/test_gpu_streams_and_configurations.py -k counter_tile_causal_d64 > $OUT/gpu_tests.txt 2>&1
  echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s: $(tail -1 $OUT/gpu_tests.txt | cut -c1-120)"
  timeout 150 python -m lab sanitize --variants counter_tile_causal_d64 --tools memcheck,racecheck,synccheck \
    --out $OUT/sanitize.json > $OUT/sanitize.txt 2>&1; echo "sanitize rc=$? $(( $(date +%s)-T0 )) s"
  grep -E "clean|CLEAN" $OUT/sanitize.txt | cut -c1-160
fi
export EXP_CONFIGS='{"s62": ["rescale_under_s", {}], "s63": ["counter_tile_causal_d64", {}]}'
export EXP_SHAPES='["1,71,8192,64,causal,kv1,bf16", "1,12,8192,64,causal,bf16", "1,71,4096,64,causal,kv1,bf16",
  "2,12,8192,64,causal,bf16", "1,12,4096,64,causal", "1,10,8192,64,causal", "1,11,4096,64,causal",
  "4,16,4096,64,causal", "2,16,8192,64,causal", "4,16,4096,64"]'
timeout 120 python $X/exp.py time 1.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
