#!/bin/bash
# The GPU tests after the shared-header fix of stop 35 (b554835), which that stop could not run for
# lack of device time: the launch-plumbing test, the configurations and streams file, the GPU
# correctness file. One H100 call (about 5 min).
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
timeout 560 python -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_launch_plumbing.py \
  tests/test_gpu_streams_and_configurations.py tests/test_gpu_correctness.py > $OUT/gpu_tests.txt 2>&1
echo "pytest rc=$?"; tail -n 3 $OUT/gpu_tests.txt
