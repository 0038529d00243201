# Device call 1 of data/explorations/2026-12-06-persistent-decode-ctas (issue 50, target 2), from the repository root
# on one H100 (carry .whl: lab's CLI). Builds steps 70 and 72, runs step 72's GPU tests (its decode
# grid, the chunk edges, more works than a wave, the stream and graph launch; step 70's wave cases too) and the
# sanitizers over its grid, then times both beside the decode peers at the decode set, hot and cold.
source .whl/prelude.sh && echo prelude ok
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-06-persistent-decode-ctas
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
python -m lab build --variants l2_promotion_by_gpu,persistent_decode_ctas > $OUT/log_build.txt 2>&1
echo "build rc=$?"
timeout 200 python -m pytest -q -m gpu tests/test_gpu_decode.py -p no:cacheprovider \
  -k "persistent_decode_ctas or (more_works and l2_promotion_by_gpu)" > $OUT/log_gpu_tests.txt 2>&1
echo "gpu tests rc=$?"; tail -3 $OUT/log_gpu_tests.txt
timeout 150 python -m lab sanitize --variants persistent_decode_ctas > $OUT/log_sanitize.txt 2>&1
echo "sanitize rc=$?"; grep -E "memcheck|racecheck|synccheck|initcheck" $OUT/log_sanitize.txt | tail -4
[ -f sanitize.json ] && cp sanitize.json $OUT/
timeout 200 python $E/compare.py $OUT > $OUT/log_compare.txt 2>&1
echo "compare rc=$?"
cat $OUT/gpu.txt
grep -E "^(hot|cold) |Error|Traceback" $OUT/log_compare.txt | tail -32
