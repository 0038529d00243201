# Device call 3 of data/explorations/2026-12-04-causal-kernels (issue 46): step 67 as written (commit 4f6ddfd), its GPU
# tests and sanitizers (the checks a kernel change needs), then step 67 against step 66 and FA3, hot, paired rounds.
# From the repository root with the landing's tree (aside.sh out; exp.py copied to .scratch), carry .whl .fa3 .scratch:
#   X=.scratch bash data/explorations/2026-12-04-causal-kernels/call3.sh      (the script itself copied to .scratch too)
# Predictions: as step 67's header (1.015x-1.035x over step 66 at the long causal D = 128 rows, 0.98x-1.01x at the short
# causal D = 128 ones, 1.000x within 0.003 at (4, 16, 4096, 128) and (4, 16, 4096, 64, causal): the same kernels).
source .whl/prelude.sh >/dev/null 2>&1
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=${X:-data/explorations/2026-11-28-kv-apart-d128}
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
timeout 330 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k uniform_row0_d128 > $OUT/log_gpu_tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s: $(tail -1 $OUT/log_gpu_tests.txt)"
timeout 120 python -m lab sanitize --variants uniform_row0_d128 --tools memcheck,racecheck,synccheck \
  --out $OUT/sanitize.json > $OUT/log_sanitize.txt 2>&1; echo "sanitize rc=$? $(( $(date +%s)-T0 )) s"; tail -3 $OUT/log_sanitize.txt
export EXP_CONFIGS='{"s66": ["non_causal_kernels_d128", {}], "s67": ["uniform_row0_d128", {}]}'
export EXP_SHAPES='["4,16,4096,128,causal", "2,16,8192,128,causal", "1,16,16384,128,causal", "16,16,1024,128,causal",
  "8,16,512,128,causal", "1,64,8192,128,causal,kv8,bf16", "4,32,2048,128,causal,kv8,bf16", "4,16,4096,128",
  "4,16,4096,64,causal"]'
timeout 200 python $X/exp.py time 3 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
