# Call 3: step 48 as committed (no draft macros): the GPU tests on it and the branch end's knock-outs, the
# sanitizers; then the draft of step 49 (draft/: headers.patch, the kernel, its manifest entry, applied to this
# machine's copy only) against step 48 where call 2 saw it lose (bf16, grouped K/V, causal), taken apart.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
D=data/explorations/2026-11-28-kv-apart-d128
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt
timeout 330 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k unmasked_loop > $OUT/gpu_tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s"; tail -3 $OUT/gpu_tests.txt
timeout 150 python -m lab sanitize --variants unmasked_loop --tools memcheck,racecheck,synccheck --out $OUT/sanitize.json \
  > $OUT/sanitize_log.txt 2>&1; echo "sanitize rc=$? $(( $(date +%s)-T0 )) s"; tail -4 $OUT/sanitize_log.txt | cut -c1-300
git apply $D/draft/headers.patch && cp $D/draft/49_kv_apart_d128.cu kernels/variants/ && cat $D/draft/manifest_49.toml >> kernels/variants/manifest.toml || exit 1
export EXP_CONFIGS='{"m48": ["unmasked_loop", {}],
 "a49x2": ["kv_apart_d128", {"FA_EXP_P24": 1, "FA_EXP_CMAX": 240, "FA_TILE_BC_D128": 128, "FA_TILE_STAGES_D128": 2}]}'
export EXP_SHAPES='["1,32,8192,128,causal", "1,32,8192,128,causal,kv8", "1,32,8192,128,causal,bf16", "1,32,8192,128,causal,kv8,bf16",
 "1,32,8192,128,kv8,bf16", "1,32,8192,128", "4,32,2048,128,causal,kv8,bf16", "4,32,2048,128,causal"]'
timeout $(( 580 - ($(date +%s)-T0) )) python $D/exp.py time 1.0 > $OUT/time_49.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-400 $OUT/time_49.txt | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
