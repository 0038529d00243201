#!/bin/bash
# Step 34 (warp_release_d64) verification, prepared for the next session (not run yet): build step 34
# and its 15 knock-outs, the full correctness grid for all 16, compute-sanitizer over all 16, the GPU
# tests of the streams and configurations, and a first read against step 33 and cuDNN.
# About 10 minutes of device time on an H100; split at the GPU tests if the call limit needs it.
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
KO=$(python -c "from lab.kernels import switches as sw; print(','.join(['warp_release_d64']+[k.impl for k in sw.knockouts('warp_release_d64', sw.load()[0])]))")
echo $KO > $OUT/ko.txt
python -m lab build --variants three_ctas_d64,$KO > $OUT/build.txt 2>&1
grep -iE "fail|error" $OUT/build.txt | head; awk '$4 !~ /^0\/0/ && NF>=7' $OUT/build.txt | grep -v "^variant" | head -20
python -m lab check --variants $KO --out $OUT/check_ko.json > $OUT/check_ko.txt 2>&1; tail -4 $OUT/check_ko.txt
timeout 300 python -m lab sanitize --variants $KO --tools memcheck,racecheck,synccheck --out $OUT/sanitize.json > $OUT/sanitize.txt 2>&1; echo "sanitize rc=$?"; tail -5 $OUT/sanitize.txt
for s in 4,16,4096,64 4,16,4096,64,causal 4,16,512,64 8,16,512,64 32,8,512,64 16,16,1024,64 4,71,2048,64,causal,kv1,bf16 2,16,8192,64 4,16,4096,128; do
  python -m lab bench --variants three_ctas_d64,warp_release_d64 --shape $s --cap 0.5 2>&1 | grep -E "^\(|three_ctas|warp_release|sdpa_cudnn" ; done > $OUT/bench.txt 2>&1
cat $OUT/bench.txt
timeout 420 python -m pytest -q -m gpu tests/test_gpu_streams_and_configurations.py -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1; tail -3 $OUT/gpu_tests.txt
