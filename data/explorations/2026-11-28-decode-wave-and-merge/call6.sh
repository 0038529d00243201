# Call 6: step 45 (no L2 promotion) and its knob (128-byte promotion; 256 bytes, step 44's) beside step 44,
# timed with SDPA; its GPU tests; Nsight Compute's memory sections for 45 at batch 8 of Llama-3-8B's heads.
set -u
HERE=data/explorations/2026-11-28-decode-wave-and-merge
export PYTHONPATH=.
P=FA_DECODE_L2_PROMOTION=CU_TENSOR_MAP_L2_PROMOTION
python data/explorations/2026-11-28-decode-first-steps/run.py $OUT early_merge_launch,no_l2_promotion,no_l2_promotion@${P}_L2_128B,no_l2_promotion@${P}_L2_256B > $OUT/run.txt 2>&1
timeout 100 python -m pytest -q -p no:cacheprovider tests/test_gpu_decode.py -k "no_l2_promotion or split_steps" > $OUT/pytest_gpu_decode.txt 2>&1
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --page details --csv"
ncu --clock-control none $S -k regex:decode_fwd python data/explorations/2026-11-28-decode-first-steps/profile_one.py 8,32,8,128,8192 no_l2_promotion > $OUT/ncu_mem_45.csv 2> $OUT/ncu_err.txt
tail -n 3 $OUT/pytest_gpu_decode.txt; grep -v "Warning\|return F" $OUT/run.txt | tail -n 23 | sed "s/no_l2_promotion@${P}_/45@/g; s/no_l2_promotion/45/g; s/early_merge_launch/44/g"; grep -E "L2 Hit|DRAM Throughput|Duration" $OUT/ncu_mem_45.csv | cut -c1-40,150-
