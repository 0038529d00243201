# Session 109: the GPU tests of every decode step (fa/decode*.cuh changed with step 72) and compute-sanitizer over
# step 72's decode grid, on the committed tree (.scratch/sha_run).
source .whl/prelude.sh && echo prelude ok
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
echo "sha $(cat .scratch/sha_run)" | tee $OUT/sha.txt
steps=$(python -c "from lab.kernels import variants; print(','.join(variants.names(problem='decode')))")
T0=$(date +%s)
python -m lab build --variants $steps > $OUT/log_build.txt 2>&1
echo "build rc=$? $(( $(date +%s)-T0 )) s"
timeout 300 python -m pytest -q -m gpu tests/test_gpu_decode.py -p no:cacheprovider > $OUT/log_gpu_tests.txt 2>&1
echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s"; tail -3 $OUT/log_gpu_tests.txt
timeout 150 python -m lab sanitize --variants persistent_decode_ctas > $OUT/log_sanitize.txt 2>&1
echo "sanitize rc=$? $(( $(date +%s)-T0 )) s"; grep -E "memcheck|racecheck|synccheck|initcheck" $OUT/log_sanitize.txt | tail -4
cat $OUT/gpu.txt
# On an H200 (the step's other GPU, never measured): step 72 against step 70 and the peers at the decode set.
if grep -q H200 $OUT/gpu.txt; then
  timeout 200 python data/explorations/2026-12-06-persistent-decode-ctas/compare.py $OUT > $OUT/log_compare.txt 2>&1
  echo "compare rc=$?"; grep -E "^hot .*(64,32,8|64,64,8)|Error|Traceback" $OUT/log_compare.txt | tail -6
fi
