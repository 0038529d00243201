# Call 2: step 47 (splits merged side by side) beside steps 45 and 46: build, GPU tests, the decode grid
# and set checked and timed with SDPA (run.py), Nsight Compute's durations of the main and merge kernels
# at three shapes that split, then the sanitizers on step 47 over the decode grid. Writes under $OUT.
set -u
R=data/explorations/2026-11-28-decode-first-steps
export PYTHONPATH=.
python -c "from lab.kernels.build import build_all; build_all(['no_l2_promotion', 'row_warps', 'merge_side_by_side'])" > $OUT/build.txt 2>&1
timeout 200 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py -k "merge_side_by_side or split_steps or bad_decode" > $OUT/pytest_gpu_decode.txt 2>&1
python $R/run.py $OUT no_l2_promotion,row_warps,merge_side_by_side > $OUT/run.txt 2>&1
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread
for spec in 1,32,8,128,131072 8,28,4,128,8192 8,71,1,64,8192 64,71,1,64,1024; do
  echo "== steps 46, 47 at $spec" >> $OUT/ncu.csv
  ncu --clock-control none --metrics $M --csv -k regex:"decode_" python $R/profile_one.py $spec row_warps,merge_side_by_side >> $OUT/ncu.csv 2>> $OUT/ncu_err.txt
done
G=$R/grid_only.py
timeout 60 compute-sanitizer --tool memcheck python $G merge_side_by_side > $OUT/san.txt 2>&1; echo "memcheck rc $?" >> $OUT/san.txt
timeout 60 compute-sanitizer --tool synccheck python $G merge_side_by_side >> $OUT/san.txt 2>&1; echo "synccheck rc $?" >> $OUT/san.txt
timeout 150 compute-sanitizer --tool racecheck python $G merge_side_by_side >> $OUT/san.txt 2>&1; echo "racecheck rc $?" >> $OUT/san.txt
tail -n 4 $OUT/build.txt; tail -n 3 $OUT/pytest_gpu_decode.txt; grep -v "Warning\|return F" $OUT/run.txt | tail -n 21
grep -E "^==|gpu__time_duration" $OUT/ncu.csv | awk -F'","' '/^==/{print; next} {print "  ", substr($5,1,45), $(NF)}'
grep -E "rc |ERROR SUMMARY|failed" $OUT/san.txt | head -12
