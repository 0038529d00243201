# One device call: build, check and time the decode steps given against SDPA's backends, the chunk-edge
# check, and Nsight Compute of the steps and cuDNN at one shape. Writes under $OUT.
#   bash call.sh STEPS NCU_STEPS [SPEC]
set -u
HERE=data/explorations/2026-11-28-decode-wave-and-merge
STEPS=$1; NCU_STEPS=$2; SPEC=${3:-8,32,8,128,8192}
export PYTHONPATH=.
python -c "from lab.kernels.build import build_all; build_all('$STEPS'.split(','))" > $OUT/build.txt 2>&1
python $HERE/edge.py $STEPS > $OUT/edge.txt 2>&1
python data/explorations/2026-11-28-decode-first-steps/run.py $OUT $STEPS > $OUT/run.txt 2>&1
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__cluster_dim_x,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum
ncu --clock-control none --metrics $M --csv python data/explorations/2026-11-28-decode-first-steps/profile_one.py $SPEC $NCU_STEPS > $OUT/ncu_steps.csv 2> $OUT/ncu_err.txt
for b in cudnn flash; do ncu --clock-control none --metrics $M --csv python $HERE/profile_peer.py $SPEC $b > $OUT/ncu_$b.csv 2>> $OUT/ncu_err.txt; done
tail -5 $OUT/build.txt; cat $OUT/edge.txt; tail -24 $OUT/run.txt
