# Call 1: step 49 (three consumer warpgroups at D = 64) as committed: the GPU tests on it and the branch
# end's knock-outs, the sanitizers; then its rule's edges timed hot: step 48 (m48), step 49 (s49) and step 49
# with the rule forced on for every non-causal D = 64 call (f49: both thresholds 0), beside FA3 and cuDNN.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt
timeout 300 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k three_warpgroups_d64 > $OUT/gpu_tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s"; tail -3 $OUT/gpu_tests.txt
timeout 120 python -m lab sanitize --variants three_warpgroups_d64 --tools memcheck,racecheck,synccheck --out $OUT/sanitize.json \
  > $OUT/sanitize_log.txt 2>&1; echo "sanitize rc=$? $(( $(date +%s)-T0 )) s"; tail -4 $OUT/sanitize_log.txt | cut -c1-300
export EXP_CONFIGS='{"m48": ["unmasked_loop", {}], "s49": ["three_warpgroups_d64", {}],
 "f49": ["three_warpgroups_d64", {"FA_TILE_THREE_WGS_MIN_S_D64": 0, "FA_TILE_THREE_WGS_TILES_PER_SM_D64": 0}]}'
export EXP_SHAPES='["4,16,4096,64", "6,16,2048,64", "5,16,2048,64", "2,16,4096,64", "1,16,8192,64", "16,16,1024,64",
 "32,16,1024,64", "4,16,4096,64,bf16", "1,16,16384,64", "4,16,4096,64,causal"]'
timeout $(( 555 - ($(date +%s)-T0) )) python $X/exp.py time 0.6 > $OUT/time_edges.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-400 $OUT/time_edges.txt | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
