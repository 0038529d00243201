# Call 5: the decode GPU tests on the final code (steps 37-44), then Nsight Compute's memory sections for
# step 44 and cuDNN at batch 8 of Llama-3-8B's heads, where the gap to cuDNN is in the steady stream.
set -u
HERE=data/explorations/2026-11-28-decode-wave-and-merge
export PYTHONPATH=.
timeout 240 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py > $OUT/pytest_gpu_decode.txt 2>&1
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --page details --csv"
ncu --clock-control none $S -k regex:decode_fwd python data/explorations/2026-11-28-decode-first-steps/profile_one.py 8,32,8,128,8192 early_merge_launch > $OUT/ncu_mem_44.csv 2> $OUT/ncu_err.txt
ncu --clock-control none $S -k regex:cudnn_generated python $HERE/profile_peer.py 8,32,8,128,8192 cudnn > $OUT/ncu_mem_cudnn.csv 2>> $OUT/ncu_err.txt
tail -n 3 $OUT/pytest_gpu_decode.txt; wc -l $OUT/ncu_mem_*.csv; tail -n 3 $OUT/ncu_err.txt
