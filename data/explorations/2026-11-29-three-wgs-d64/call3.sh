# Call 3: step 49 as committed after call 2 (its tile's producer keeps 40 registers, a consumer 152; the tile
# walks the static list only): the GPU tests on it and the branch end's knock-outs, the sanitizers, and a short
# timing against step 48.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
T0=$(date +%s)
timeout 300 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k three_warpgroups_d64 > $OUT/gpu_tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s"; tail -3 $OUT/gpu_tests.txt
timeout 120 python -m lab sanitize --variants three_warpgroups_d64 --tools memcheck,racecheck,synccheck --out $OUT/sanitize.json \
  > $OUT/sanitize_log.txt 2>&1; echo "sanitize rc=$? $(( $(date +%s)-T0 )) s"; tail -4 $OUT/sanitize_log.txt | cut -c1-300
export EXP_CONFIGS='{"m48": ["unmasked_loop", {}], "s49": ["three_warpgroups_d64", {}]}'
export EXP_SHAPES='["4,16,4096,64", "1,16,16384,64", "6,16,2048,64", "4,16,4096,64,bf16"]'
timeout $(( 300 - ($(date +%s)-T0) )) python $X/exp.py time 0.5 > $OUT/time_s49.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-400 $OUT/time_s49.txt | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
