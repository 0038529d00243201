#!/bin/bash
# Before stopping (H100): the two GPU tests of state kept between launches, now at a case step 35 feeds
# from its counter (COUNTER_CASE), for every step that takes grouped K/V; and the hold kernel
# (kernels/measure/block_until_released.cu, stop 36) under compute-sanitizer memcheck and synccheck,
# through its GPU tests.
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
python -m lab build --variants model_inputs,portable_model_inputs,serial_d64,tma_store_d128,wide_kv_tiles_long_d64,three_ctas_d64,warp_release_d64,longest_first_queue > $OUT/build.txt 2>&1
echo "built at $((SECONDS-T0)) s"
timeout 150 python -m pytest -q -m gpu tests/test_gpu_streams_and_configurations.py -k "four_streams or 1100" -p no:cacheprovider > $OUT/state_tests.txt 2>&1
echo "state tests rc=$? at $((SECONDS-T0)) s"; tail -n 2 $OUT/state_tests.txt
for tool in memcheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --target-processes all python -m pytest -q -m gpu tests/test_gpu_timing_hold.py -p no:cacheprovider > $OUT/hold_$tool.txt 2>&1
  echo "$tool rc=$? at $((SECONDS-T0)) s"; grep -E "ERROR SUMMARY|passed|failed" $OUT/hold_$tool.txt | tail -n 3
done
