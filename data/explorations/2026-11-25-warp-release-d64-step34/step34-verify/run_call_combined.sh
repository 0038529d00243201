#!/bin/bash
# step 34 verification in one call: build; GPU tests in the background while the full grid and the
# sanitizer run; then the timing read alone on the GPU.
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
KO=$(python -c "from lab.kernels import switches as sw; print(','.join(['warp_release_d64']+[k.impl for k in sw.knockouts('warp_release_d64', sw.load()[0])]))")
echo $KO > $OUT/ko.txt
python -m lab build --variants three_ctas_d64,$KO > $OUT/build.txt 2>&1
grep -iE "fail|error" $OUT/build.txt | head; awk '$4 !~ /^0\/0/ && NF>=7' $OUT/build.txt | grep -v "^variant" | head -20
echo "built at $((SECONDS-T0)) s"
(timeout 400 python -m pytest -q -m gpu tests/test_gpu_streams_and_configurations.py -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1; echo "pytest rc=$?" >> $OUT/gpu_tests.txt) &
PYT=$!
python -m lab check --variants $KO --out $OUT/check_ko.json > $OUT/check_ko.txt 2>&1; tail -n 4 $OUT/check_ko.txt
echo "checked at $((SECONDS-T0)) s"
timeout 300 python -m lab sanitize --variants $KO --tools memcheck,racecheck,synccheck --out $OUT/sanitize.json > $OUT/sanitize.txt 2>&1; echo "sanitize rc=$?"; tail -n 5 $OUT/sanitize.txt
echo "sanitized at $((SECONDS-T0)) s"
wait $PYT; tail -n 3 $OUT/gpu_tests.txt
echo "gpu tests done at $((SECONDS-T0)) s"
for s in 4,16,4096,64 4,16,4096,64,causal 4,16,512,64 8,16,512,64 32,8,512,64 16,16,1024,64 4,71,2048,64,causal,kv1,bf16 2,16,8192,64 4,16,4096,128; do
  python -m lab bench --variants three_ctas_d64,warp_release_d64 --shape $s --cap 0.5 2>&1 | grep -E "^\(|three_ctas|warp_release|sdpa_cudnn" ; done > $OUT/bench.txt 2>&1
cat $OUT/bench.txt
echo "done at $((SECONDS-T0)) s"
