# Call 1 (issue 46, and issue 48's step-35 switches): on step 50 with the switches patch applied (fa/tile_queue.cuh),
# the GPU tests of the twin's knock-outs and the branch end, the sanitizers on the branch end; then ftz_max.patch
# (knobs FA_EXP_FTZ_MAX, FA_EXP_MAX_TREE in fa/mma_attention.cuh): the row maxima as max.ftz (FMNMX.FTZ, FA3's),
# the partial sums as add.ftz, and/or the row maximum as 4 independent chains; the correctness grid, then hot timing.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
H=data/explorations/2026-11-29-ftz-row-max
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
timeout 240 python -m pytest -q -p no:cacheprovider tests/test_gpu_streams_and_configurations.py -k pipeline_state_d128 \
  > $OUT/gpu_tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s"; tail -2 $OUT/gpu_tests.txt | cut -c1-300
timeout 120 python -m lab sanitize --variants pipeline_state_d128 --tools memcheck,racecheck,synccheck --out $OUT/sanitize.json \
  > $OUT/sanitize_log.txt 2>&1; echo "sanitize rc=$? $(( $(date +%s)-T0 )) s"; tail -3 $OUT/sanitize_log.txt | cut -c1-200
git apply $H/ftz_max.patch || exit 1
export EXP_CONFIGS='{"s50": ["pipeline_state_d128", {}], "ftz": ["pipeline_state_d128", {"FA_EXP_FTZ_MAX": 1}],
  "tree": ["pipeline_state_d128", {"FA_EXP_MAX_TREE": 4}], "ftz_tree": ["pipeline_state_d128", {"FA_EXP_FTZ_MAX": 1, "FA_EXP_MAX_TREE": 4}]}'
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "4,16,4096,128,causal",
  "1,16,16384,128,causal", "1,32,8192,128,causal,kv8,bf16", "4,32,2048,128,causal,kv8,bf16", "4,16,4096,64",
  "4,16,4096,64,causal", "1,12,8192,64,causal,bf16"]'
EXP_ONLY=ftz,tree,ftz_tree timeout 200 python $X/exp.py check > $OUT/check_ftz.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "built|check|FAIL" $OUT/check_ftz.txt | cut -c1-160 | tail -10
timeout $(( 575 - ($(date +%s)-T0) )) python $X/exp.py time 0.8 > $OUT/time_ftz.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-500 $OUT/time_ftz.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
