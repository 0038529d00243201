# Call 3: step 44 (the merge launched early) beside 42, and 44 with the split rule's "within" at 95 %;
# its GPU tests and the chunk-edge check; timing with SDPA; sanitizers on 43 and 44 over the decode grid.
set -u
HERE=data/explorations/2026-11-28-decode-wave-and-merge
export PYTHONPATH=.
python -c "from lab.kernels.build import build_all; build_all('split_by_efficiency,cluster_merge,early_merge_launch'.split(','))" > $OUT/build.txt 2>&1
python $HERE/edge.py early_merge_launch > $OUT/edge.txt 2>&1
timeout 150 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py -k "early_merge_launch or split_steps" > $OUT/pytest_gpu_decode.txt 2>&1
python data/explorations/2026-11-28-decode-first-steps/run.py $OUT split_by_efficiency,early_merge_launch,early_merge_launch@FA_DECODE_SPLIT_WITHIN_PCT=95 > $OUT/run.txt 2>&1
G=data/explorations/2026-11-28-decode-first-steps/grid_only.py
timeout 100 compute-sanitizer --tool memcheck python $G early_merge_launch > $OUT/san.txt 2>&1; echo "memcheck 44 rc $?" >> $OUT/san.txt
timeout 100 compute-sanitizer --tool synccheck python $G early_merge_launch,cluster_merge >> $OUT/san.txt 2>&1; echo "synccheck 43-44 rc $?" >> $OUT/san.txt
timeout 200 compute-sanitizer --tool racecheck python $G cluster_merge,early_merge_launch >> $OUT/san.txt 2>&1; echo "racecheck 43-44 rc $?" >> $OUT/san.txt
cat $OUT/build.txt $OUT/edge.txt; tail -n 3 $OUT/pytest_gpu_decode.txt; grep -v "Warning\|return F" $OUT/run.txt | tail -n 21; grep -E "rc |ERROR SUMMARY|failed|RACE|hazard" $OUT/san.txt | head -20
