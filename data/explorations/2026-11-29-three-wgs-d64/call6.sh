# Call 6: step 50 as committed (78322d1, with issue 48's headers patch): the GPU tests on it and the branch end's
# knock-outs, a TMA step and the decode steps whose tensor maps the headers patch now encodes through one helper,
# the sanitizers, and a short timing against step 49.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
T0=$(date +%s)
timeout 300 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k "pipeline_state_d128 or tma_q_first" > $OUT/gpu_tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s"; tail -3 $OUT/gpu_tests.txt
timeout 120 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py -k "tensor_map_tiles or merge_side_by_side" \
  > $OUT/gpu_decode_tests.txt 2>&1; echo "decode tests rc=$? $(( $(date +%s)-T0 )) s"; tail -3 $OUT/gpu_decode_tests.txt
timeout 120 python -m lab sanitize --variants pipeline_state_d128 --tools memcheck,racecheck,synccheck --out $OUT/sanitize.json \
  > $OUT/sanitize_log.txt 2>&1; echo "sanitize rc=$? $(( $(date +%s)-T0 )) s"; tail -4 $OUT/sanitize_log.txt | cut -c1-300
export EXP_CONFIGS='{"s49": ["three_warpgroups_d64", {}], "s50": ["pipeline_state_d128", {}]}'
export EXP_SHAPES='["4,16,4096,128", "4,16,4096,128,causal", "1,16,16384,128", "1,32,8192,128,causal,kv8,bf16", "4,16,4096,64"]'
timeout $(( 420 - ($(date +%s)-T0) )) python $X/exp.py time 0.5 > $OUT/time_s50.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-400 $OUT/time_s50.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
