# Call 1: step 46 (row warps for wide groups) beside step 45: build, GPU tests, the decode grid and set
# checked and timed with SDPA (run.py), Nsight Compute at the Falcon-7B shape and at two shapes where
# step 45 trails cuDNN, then the sanitizers on step 46 over the decode grid. Writes under $OUT.
set -u
R=data/explorations/2026-11-28-decode-first-steps
W=data/explorations/2026-11-28-decode-wave-and-merge
export PYTHONPATH=.
python -c "from lab.kernels.build import build_all; build_all(['no_l2_promotion', 'row_warps'])" > $OUT/build.txt 2>&1
timeout 200 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py -k "row_warps or split_steps or bad_decode" > $OUT/pytest_gpu_decode.txt 2>&1
python $R/run.py $OUT no_l2_promotion,row_warps > $OUT/run.txt 2>&1
S="--section SpeedOfLight --section LaunchStats --section Occupancy --page details --csv"
for spec in 64,71,1,64,1024 8,28,4,128,8192 1,32,8,128,131072; do
  echo "== steps 45, 46 at $spec" >> $OUT/ncu.csv
  ncu --clock-control none $S -k regex:"decode_fwd|combine" python $R/profile_one.py $spec no_l2_promotion,row_warps >> $OUT/ncu.csv 2>> $OUT/ncu_err.txt
  echo "== cudnn at $spec" >> $OUT/ncu.csv
  ncu --clock-control none $S python $W/profile_peer.py $spec cudnn >> $OUT/ncu.csv 2>> $OUT/ncu_err.txt
done
G=$R/grid_only.py
timeout 60 compute-sanitizer --tool memcheck python $G row_warps > $OUT/san.txt 2>&1; echo "memcheck rc $?" >> $OUT/san.txt
timeout 60 compute-sanitizer --tool synccheck python $G row_warps >> $OUT/san.txt 2>&1; echo "synccheck rc $?" >> $OUT/san.txt
timeout 150 compute-sanitizer --tool racecheck python $G row_warps >> $OUT/san.txt 2>&1; echo "racecheck rc $?" >> $OUT/san.txt
cat $OUT/build.txt | tail -n 4; tail -n 3 $OUT/pytest_gpu_decode.txt; grep -v "Warning\|return F" $OUT/run.txt | tail -n 21
grep -E '^==|"Duration"|"DRAM Throughput"|"Grid Size"|"Block Size"|"Achieved Occupancy"' $OUT/ncu.csv | awk -F'","' '{print $5, $(NF-2), $NF}' | cut -c1-100 | head -60
grep -E "rc |ERROR SUMMARY|failed" $OUT/san.txt | head -12
