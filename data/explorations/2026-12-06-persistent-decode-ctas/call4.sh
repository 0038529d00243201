# Device call 4 of data/explorations/2026-12-06-persistent-decode-ctas (issue 50, target 2): step72_fastdiv.patch
# (persistent CTAs only where a call's works outnumber the wave, the work decoded with the host's multipliers),
# from the repository root on one H100 with the patch applied (carry .whl). As call 1, then Nsight Compute over one
# cold call of each step at the two batch-64 calls, the only set shapes whose works outnumber the wave.
# D = directory holding compare.py and ncu_table.py (this folder, or a carried copy of it).
D=${D:-data/explorations/2026-12-06-persistent-decode-ctas}
source .whl/prelude.sh && echo prelude ok
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
python -m lab build --variants l2_promotion_by_gpu,persistent_decode_ctas > $OUT/log_build.txt 2>&1
echo "build rc=$?"
timeout 200 python -m pytest -q -m gpu tests/test_gpu_decode.py -p no:cacheprovider \
  -k "persistent_decode_ctas or (more_works and l2_promotion_by_gpu)" > $OUT/log_gpu_tests.txt 2>&1
echo "gpu tests rc=$?"; tail -3 $OUT/log_gpu_tests.txt
timeout 150 python -m lab sanitize --variants persistent_decode_ctas > $OUT/log_sanitize.txt 2>&1
echo "sanitize rc=$?"; grep -E "memcheck|racecheck|synccheck|initcheck" $OUT/log_sanitize.txt | tail -4
timeout 200 python $D/compare.py $OUT > $OUT/log_compare.txt 2>&1
echo "compare rc=$?"
M=gpu__time_duration.sum,smsp__inst_executed.sum,sm__cycles_elapsed.max,launch__registers_per_thread,launch__grid_size
M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
T=l2_promotion_by_gpu,persistent_decode_ctas
timeout 100 ncu --clock-control none --print-units base --nvtx --nvtx-include "profile/" --csv --page raw --metrics $M \
  python -m lab.measure.decode_profile --shape 64,32,8,128,1024,bf16 --target $T --shape 64,64,8,128,1024,bf16 \
  --target $T > $OUT/ncu4.csv 2> $OUT/log_ncu4.txt
echo "ncu rc=$?"
cat $OUT/gpu.txt
python $D/ncu_table.py $OUT/ncu4.csv 64,32,8,128,1024,bf16 64,64,8,128,1024,bf16
grep -E "^(hot|cold) |Error|Traceback" $OUT/log_compare.txt | tail -40
