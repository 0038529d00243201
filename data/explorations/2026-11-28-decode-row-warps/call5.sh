# Call 5: after the review's refactor of fa/decode.cuh (one launcher for the merges, decode_load_q for a row
# warp's Q; no change in behaviour): every decode step's GPU tests, and memcheck and racecheck of steps 46
# and 47 over the decode grid. Writes under $OUT.
set -u
R=data/explorations/2026-11-28-decode-first-steps
export PYTHONPATH=.
timeout 300 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py > $OUT/pytest_gpu_decode_all.txt 2>&1
G=$R/grid_only.py
timeout 90 compute-sanitizer --tool memcheck python $G row_warps,merge_side_by_side > $OUT/san.txt 2>&1; echo "memcheck rc $?" >> $OUT/san.txt
timeout 150 compute-sanitizer --tool racecheck python $G merge_side_by_side >> $OUT/san.txt 2>&1; echo "racecheck rc $?" >> $OUT/san.txt
tail -n 2 $OUT/pytest_gpu_decode_all.txt; grep -E "rc |ERROR SUMMARY|failed" $OUT/san.txt
