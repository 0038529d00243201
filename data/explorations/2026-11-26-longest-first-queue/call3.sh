#!/bin/bash
# Step 35 (work tiles from a queue, longest first) on an H100, first call: build beside step 34;
# the full correctness grid, compute-sanitizer and the GPU tests of step 35; then an A/B run (hot,
# three replicates, cuDNN as the peer) at the models shapes, the large and long causal ones and a few
# non-causal ones; the table last.
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-26-longest-first-queue
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv | tee $OUT/gpu.txt
python -m lab build --variants warp_release_d64,longest_first_queue > $OUT/build.txt 2>&1
grep -iE "fail|error" $OUT/build.txt | head; grep -E "longest_first_queue" $OUT/build.txt | head -12
echo "built at $((SECONDS-T0)) s"
timeout 90 python -m lab check --variants longest_first_queue --quick > $OUT/smoke.txt 2>&1 || { echo "smoke failed rc=$?"; tail -5 $OUT/smoke.txt; exit 1; }
echo "smoke at $((SECONDS-T0)) s"
(timeout 200 python -m pytest -q -m gpu tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
   tests/test_gpu_launch_plumbing.py -k "longest_first_queue" -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1; \
 echo "pytest rc=$?" >> $OUT/gpu_tests.txt) &
PYT=$!
timeout 150 python -m lab check --variants longest_first_queue --out $OUT/check.json > $OUT/check.txt 2>&1; tail -n 4 $OUT/check.txt
echo "checked at $((SECONDS-T0)) s"
timeout 200 python -m lab sanitize --variants longest_first_queue --tools memcheck,racecheck,synccheck \
  --out $OUT/sanitize.json > $OUT/sanitize.txt 2>&1; echo "sanitize rc=$?"; tail -n 5 $OUT/sanitize.txt
echo "sanitized at $((SECONDS-T0)) s"
wait $PYT; tail -n 3 $OUT/gpu_tests.txt
echo "gpu tests done at $((SECONDS-T0)) s"
S="4,32,2048,128,causal,kv8,bf16;1,32,8192,128,causal,kv8,bf16;4,64,2048,128,causal,kv8,bf16;1,64,8192,128,causal,kv8,bf16"
S="$S;4,28,2048,128,causal,kv4,bf16;1,28,8192,128,causal,kv4,bf16;4,71,2048,64,causal,kv1,bf16;1,71,8192,64,causal,kv1,bf16"
S="$S;4,12,2048,64,causal,bf16;1,12,8192,64,causal,bf16;4,16,4096,64,causal;4,16,4096,128,causal;2,16,8192,128,causal"
S="$S;16,16,1024,128,causal;4,16,4096,64;4,16,4096,128;4,16,512,64;8,16,512,64,causal"
before=$(ls data/runs | tail -1)
timeout -k 10 $((560-SECONDS+T0)) python -m lab.pipeline --no-report --shapes "$S" --modes hot \
  --variants warp_release_d64,longest_first_queue --peers sdpa_cudnn --knockouts 0 --profile 0 --check none \
  > $OUT/ab_log.txt 2>&1
echo "A/B rc=$? at $((SECONDS-T0)) s"; tail -n 3 $OUT/ab_log.txt
after=$(ls data/runs | tail -1)
if [ "$after" != "$before" ]; then
  tar czf $OUT/run.tgz -C data/runs "$after"
  python $X/ab.py "$after" | tee $OUT/ab.txt
fi
echo "done at $((SECONDS-T0)) s"
