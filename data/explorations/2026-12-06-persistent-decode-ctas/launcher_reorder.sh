# After the launcher's reorder (launcher_reorder.patch, applied to the device's copy): step 72's decode GPU tests and
# its sanitizers. Run from the repository root with .whl carried (../shared/device/README.md).
source .whl/prelude.sh && echo prelude ok
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 150 python -m pytest -q -m gpu tests/test_gpu_decode.py -p no:cacheprovider -k persistent_decode_ctas \
  > $OUT/log_gpu_tests.txt 2>&1
echo "gpu tests rc=$?"; tail -2 $OUT/log_gpu_tests.txt
timeout 120 python -m lab sanitize --variants persistent_decode_ctas > $OUT/log_sanitize.txt 2>&1
echo "sanitize rc=$?"; grep -E "memcheck|racecheck|synccheck|initcheck" $OUT/log_sanitize.txt | tail -4
cat $OUT/gpu.txt
