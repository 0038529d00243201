# Call 2's profile (issue 50): step 70 against step 72, one cold call each under Nsight Compute at three decode set
# shapes (one work a CTA at D = 64 and D = 128, two works a CTA at batch 64): time, instructions, cycles, registers,
# achieved warps, DRAM throughput, so a fixed loss shows where it sits. From the repository root, after call1.sh.
M=gpu__time_duration.sum,smsp__inst_executed.sum,sm__cycles_elapsed.max,launch__registers_per_thread,launch__grid_size
M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
T=l2_promotion_by_gpu,persistent_decode_ctas
timeout 150 ncu --clock-control none --print-units base --nvtx --nvtx-include "profile/" --csv --page raw --metrics $M \
  python -m lab.measure.decode_profile --shape 64,71,1,64,1024,bf16 --target $T --shape 8,32,8,128,8192,bf16 \
  --target $T --shape 64,32,8,128,1024,bf16 --target $T > $OUT/ncu2.csv 2> $OUT/log_ncu2.txt
echo "ncu rc=$?"
python data/explorations/2026-12-06-persistent-decode-ctas/ncu_table.py $OUT/ncu2.csv
