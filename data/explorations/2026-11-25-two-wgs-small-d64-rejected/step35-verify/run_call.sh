#!/bin/bash
# Step 35 (two_wgs_small_d64) verification, prepared for the next session (not run yet), one H100 call
# (about 9 min): build step 34 and step 35 with its 16 knock-outs; the GPU tests in the background of
# the full correctness grid and compute-sanitizer over all 17; then the first read against step 34
# and cuDNN, alone on the GPU, at shapes the rule takes and two it keeps out.
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
KO=$(python -c "from lab.kernels import switches as sw; print(','.join(['two_wgs_small_d64']+[k.impl for k in sw.knockouts('two_wgs_small_d64', sw.load()[0])]))")
echo $KO > $OUT/ko.txt
python -m lab build --variants warp_release_d64,$KO > $OUT/build.txt 2>&1
grep -iE "fail|error" $OUT/build.txt | head; echo "built at $((SECONDS-T0)) s"
(timeout 400 python -m pytest -q -m gpu tests/test_gpu_streams_and_configurations.py -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1; echo "pytest rc=$?" >> $OUT/gpu_tests.txt) &
PYT=$!
python -m lab check --variants $KO --out $OUT/check_ko.json > $OUT/check_ko.txt 2>&1; tail -n 4 $OUT/check_ko.txt
echo "checked at $((SECONDS-T0)) s"
timeout 300 python -m lab sanitize --variants $KO --tools memcheck,racecheck,synccheck --out $OUT/sanitize.json > $OUT/sanitize.txt 2>&1; echo "sanitize rc=$?"; tail -n 4 $OUT/sanitize.txt
echo "sanitized at $((SECONDS-T0)) s"
wait $PYT; tail -n 2 $OUT/gpu_tests.txt; echo "gpu tests done at $((SECONDS-T0)) s"
for s in 4,16,512,64 8,16,512,64 16,16,256,64 4,32,384,64,kv8,bf16 6,12,512,64,bf16; do
  python -m lab bench --variants warp_release_d64,two_wgs_small_d64 --shape $s --cap 0.5 2>&1 | grep -E "^\(|warp_release|two_wgs|sdpa_cudnn" ; done > $OUT/bench.txt 2>&1
cat $OUT/bench.txt; echo "done at $((SECONDS-T0)) s"
