#!/bin/bash
# One H100 call: the job-overhead profile (profile_job.py, about 2 min), then the GPU tests the
# header fix of stop 35 left unrun (data/explorations/2026-11-26-min-blocks/gpu_tests_call.sh).
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv | tee $OUT/gpu.txt
nproc
timeout 200 python data/explorations/2026-11-25-timing-overhead/profile_job.py $OUT 0 > $OUT/profile_log.txt 2>&1
echo "profile rc=$? at $((SECONDS-T0)) s"; grep -v "^    \|^  \|building\|build done" $OUT/profile_log.txt | tail -30
timeout $((570-SECONDS+T0)) python -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_launch_plumbing.py \
  tests/test_gpu_streams_and_configurations.py tests/test_gpu_correctness.py > $OUT/gpu_tests.txt 2>&1
echo "pytest rc=$? at $((SECONDS-T0)) s"; tail -n 3 $OUT/gpu_tests.txt
