# The draft step 58 (last_chunk_merges) on one GPU (the session's last ~390 s of device time): its decode GPU
# tests (the grid's 14 cases, each call twice into NaN-poisoned outputs and bit-identical: a counter left non-zero
# by the first call would leave the second's rows unmerged), then the sweep of steps 57 and 58 against SDPA at the
# decode set's split shapes and two single-chunk ones (hot and cold), then memcheck and racecheck over the grid on
# step 58, each behind a timeout so that the call returns within the budget. The predictions are the step's header's,
# written before this call. From the repository root with last_chunk_merges.patch applied (`git apply`): carry
# [".whl"].
source .whl/prelude.sh >/dev/null 2>&1
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
timeout 90 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py -k last_chunk_merges > $OUT/log_gpu_tests.txt 2>&1
echo "gpu tests rc=$? $(( $(date +%s)-T0 )) s: $(tail -1 $OUT/log_gpu_tests.txt | cut -c1-100)"
S="32,28,4,128,4096,mixed,bf16 8,71,1,64,8192,bf16 8,32,8,128,8192,bf16 16,28,4,128,32768,q4,page64,bf16"
S="$S 1,32,8,128,131072,bf16 32,71,1,64,4096,mixed,bf16 32,71,1,64,1024,bf16 64,32,8,128,1024,bf16"
SWEEP_MODES=hot,cold timeout 75 python data/explorations/2026-12-02-decode-splits/sweep.py $OUT \
  s57=tensor_maps_prefetched s58=last_chunk_merges -- $S > $OUT/log_sweep.txt 2>&1
echo "sweep rc=$? $(( $(date +%s)-T0 )) s"
python data/explorations/2026-12-02-decode-splits/table.py $OUT/sweep.json s57 > $OUT/table.txt 2>&1
G=data/explorations/2026-11-28-decode-first-steps/grid_only.py
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 python $G last_chunk_merges > $OUT/log_memcheck.txt 2>&1
echo "memcheck rc=$? $(( $(date +%s)-T0 )) s: $(grep -h "SUMMARY\|grid cases" $OUT/log_memcheck.txt | tr '\n' ' ')"
timeout 40 compute-sanitizer --tool racecheck --error-exitcode 1 python $G last_chunk_merges > $OUT/log_racecheck.txt 2>&1
echo "racecheck rc=$? $(( $(date +%s)-T0 )) s: $(grep -h "SUMMARY\|grid cases" $OUT/log_racecheck.txt | tr '\n' ' ')"
grep -E "passed|failed|FAIL" $OUT/log_gpu_tests.txt | tail -3 | cut -c1-200
grep -E "^check" $OUT/log_sweep.txt
cut -c1-200 $OUT/table.txt
