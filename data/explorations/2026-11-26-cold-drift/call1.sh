#!/bin/bash
# H100: the GPU tests of state kept between launches at COUNTER_CASE (never run in that form), the new
# graph replay test there, then cold.py.
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-26-cold-drift
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv | tee $OUT/gpu.txt
python -m lab build --variants model_inputs,portable_model_inputs,serial_d64,tma_store_d128,wide_kv_tiles_long_d64,three_ctas_d64,warp_release_d64,longest_first_queue > $OUT/build.txt 2>&1
echo "built rc=$? at $((SECONDS-T0)) s"; tail -n 2 $OUT/build.txt
#timeout 200 python -m pytest -q -m gpu tests/test_gpu_streams_and_configurations.py -k "four_streams or 1100 or again_and_again" -p no:cacheprovider > $OUT/state_tests.txt 2>&1
echo "state tests rc=$? at $((SECONDS-T0)) s"; tail -n 3 $OUT/state_tests.txt
REPEATS=${REPEATS:-12} timeout 200 python $X/cold.py > $OUT/cold.txt 2>&1
echo "cold rc=$? at $((SECONDS-T0)) s"; tail -n 8 $OUT/cold.txt
