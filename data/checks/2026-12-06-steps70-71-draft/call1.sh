# Device call 1 of data/checks/2026-12-06-steps70-71-draft (issues 46 and 50), from the repository root with
# steps70-71.patch applied on the device's copy; carry [".whl", ".fa3"] (data/checks, data/runs and most explorations
# moved aside so that the tree fits). The GPU tests of step 71 (older_queue_under_8_pairs) as
# lab/studies/landing/land.sh runs them, then compute-sanitizer on it, each behind a timeout (the session's last
# device seconds: what finishes comes back). Step 70's GPU tests, memcheck and racecheck ran in
# ../../explorations/2026-12-06-decode-l2-promotion/step70-h100b.
# Prediction: every GPU test passes; the sanitizers report no error.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
S71=older_queue_under_8_pairs
timeout 170 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py \
  tests/test_gpu_streams_and_configurations.py -k "$S71" > $OUT/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
timeout 80 python -m lab sanitize --variants $S71 --tools memcheck,racecheck,synccheck \
  --out $OUT/sanitize.json > $OUT/sanitize.txt 2>&1
echo "sanitize rc=$? $(( $(date +%s)-T0 )) s: $(tail -2 $OUT/sanitize.txt | tr '\n' ' ' | cut -c1-200)"
