#!/bin/bash
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
python -m lab build --variants three_ctas_d64 > /dev/null 2>&1
timeout 480 python -m pytest -q -m gpu tests/test_gpu_streams_and_configurations.py -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1; echo "pytest rc=$?"; tail -6 $OUT/gpu_tests.txt
