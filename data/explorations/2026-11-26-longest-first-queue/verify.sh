#!/bin/bash
# Step 35 as the sm_90a branch's end, verified on an H100 in one call: every variant built (the GPU
# tests load them all); step 35's 16 knock-outs and the step on the full correctness grid; compute-
# sanitizer over them; the three GPU test files (knock-outs and the tuned dispatch on the grid, graph
# replay, stream order, four streams at once and 1100 launches in a row for every variant) in the
# background.
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
KO=$(python -c "from lab.kernels import switches as sw; print(','.join(['longest_first_queue']+[k.impl for k in sw.knockouts('longest_first_queue', sw.load()[0])]))")
echo $KO > $OUT/ko.txt
python -m lab build > $OUT/build_all.txt 2>&1; grep -ciE "failed" $OUT/build_all.txt
python -m lab build --variants $KO > $OUT/build.txt 2>&1
grep -iE "fail|error" $OUT/build.txt | head; awk '$4 !~ /^0\/0/ && NF>=7' $OUT/build.txt | grep -v "^variant" | head -20
echo "built at $((SECONDS-T0)) s"
(timeout 420 python -m pytest -q -m gpu tests/test_gpu_streams_and_configurations.py tests/test_gpu_launch_plumbing.py \
   -p no:cacheprovider --maxfail=5 > $OUT/gpu_tests.txt 2>&1; echo "pytest rc=$?" >> $OUT/gpu_tests.txt) &
PYT=$!
timeout 180 python -m lab check --variants $KO --out $OUT/check_ko.json > $OUT/check_ko.txt 2>&1; echo "check rc=$?"; tail -n 4 $OUT/check_ko.txt
echo "checked at $((SECONDS-T0)) s"
timeout 280 python -m lab sanitize --variants $KO --tools memcheck,racecheck,synccheck --out $OUT/sanitize.json > $OUT/sanitize.txt 2>&1; echo "sanitize rc=$?"; tail -n 5 $OUT/sanitize.txt
echo "sanitized at $((SECONDS-T0)) s"
wait $PYT; tail -n 5 $OUT/gpu_tests.txt
echo "done at $((SECONDS-T0)) s"
