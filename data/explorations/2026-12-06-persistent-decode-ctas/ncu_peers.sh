# Session 109, on an H100 that came for an H200 call: Nsight Compute over one cold call of step 70 and of SDPA's
# cuDNN and default backends at the two batch-64 decode calls, where step 70 trails the fastest peer by 0.4-0.5 %.
source .whl/prelude.sh && echo prelude ok
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
M=gpu__time_duration.sum,smsp__inst_executed.sum,sm__cycles_elapsed.max,launch__registers_per_thread,launch__grid_size
M=$M,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,smsp__inst_executed_op_global_ld.sum
T=l2_promotion_by_gpu,sdpa_cudnn,sdpa_default
timeout 200 ncu --clock-control none --print-units base --nvtx --nvtx-include "profile/" --csv --page raw --metrics $M \
  python -m lab.measure.decode_profile --shape 64,32,8,128,1024,bf16 --target $T --shape 64,64,8,128,1024,bf16 \
  --target $T > $OUT/ncu_peers.csv 2> $OUT/log_ncu_peers.txt
echo "ncu rc=$?"; cat $OUT/gpu.txt
python data/explorations/2026-12-06-persistent-decode-ctas/ncu_rows.py $OUT/ncu_peers.csv
