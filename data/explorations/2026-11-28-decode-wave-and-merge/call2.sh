# Call 2: step 43 built beside 41-42; the chunk-edge check; the decode GPU tests; timing of 42-43 with SDPA;
# Nsight Compute of 43 at one shape; compute-sanitizer memcheck and racecheck of 43 on the decode grid.
set -u
HERE=data/explorations/2026-11-28-decode-wave-and-merge
export PYTHONPATH=.
python -c "from lab.kernels.build import build_all; build_all('split_kv,tensor_map_tiles,split_by_efficiency,cluster_merge'.split(','))" > $OUT/build.txt 2>&1
python $HERE/edge.py split_kv,split_by_efficiency,cluster_merge > $OUT/edge.txt 2>&1
timeout 200 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py > $OUT/pytest_gpu_decode.txt 2>&1
python data/explorations/2026-11-28-decode-first-steps/run.py $OUT split_by_efficiency,cluster_merge > $OUT/run.txt 2>&1
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__cluster_dim_x,lts__t_bytes.sum
for spec in 8,32,8,128,8192 8,28,4,128,8192; do ncu --clock-control none --metrics $M --csv python data/explorations/2026-11-28-decode-first-steps/profile_one.py $spec cluster_merge >> $OUT/ncu_43.csv 2>> $OUT/ncu_err.txt; done
timeout 110 compute-sanitizer --tool memcheck python data/explorations/2026-11-28-decode-first-steps/grid_only.py cluster_merge > $OUT/san_memcheck_43.txt 2>&1; echo "memcheck rc $?" >> $OUT/san_memcheck_43.txt
timeout 130 compute-sanitizer --tool racecheck python data/explorations/2026-11-28-decode-first-steps/grid_only.py cluster_merge > $OUT/san_racecheck_43.txt 2>&1; echo "racecheck rc $?" >> $OUT/san_racecheck_43.txt
cat $OUT/build.txt $OUT/edge.txt; tail -3 $OUT/pytest_gpu_decode.txt; grep -v "Warning\|return F" $OUT/run.txt | tail -21; tail -3 $OUT/san_*.txt
