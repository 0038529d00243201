# Call 3: step 47 with the side-by-side merge only where a call splits into more than 8 chunks (step 46's
# merge elsewhere), beside steps 45 and 46: build, GPU tests, the decode grid and set checked and timed
# with SDPA (run.py). The kernels are call 2's (sanitized there); only the host's choice changed.
set -u
R=data/explorations/2026-11-28-decode-first-steps
export PYTHONPATH=.
python -c "from lab.kernels.build import build_all; build_all(['no_l2_promotion', 'row_warps', 'merge_side_by_side'])" > $OUT/build.txt 2>&1
timeout 200 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py -k "merge_side_by_side or split_steps or bad_decode" > $OUT/pytest_gpu_decode.txt 2>&1
python $R/run.py $OUT no_l2_promotion,row_warps,merge_side_by_side > $OUT/run.txt 2>&1
tail -n 4 $OUT/build.txt; tail -n 3 $OUT/pytest_gpu_decode.txt; grep -v "Warning\|return F" $OUT/run.txt | tail -n 21
