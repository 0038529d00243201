# Issue 46 (and issue 50's last hot miss), launch by launch: Nsight Compute over one launch each of step 53
# (two_stages_three_wgs_d64) and FlashAttention-3 on the same inputs, and of decode step 57 (tensor_maps_prefetched)
# and SDPA's cuDNN backend, with the metrics that split a time gap into "the SMs idle" (scheduling, the tail) and
# "the SMs busy longer" (the loop), and the busy part into dynamic instruction counts by pipe. Run
# 20261202T072449Z-8ad9cf1 has step 53 at 0.944x FA3 hot at (1, 16, 16384, 128, causal), 0.958x at (2, 16, 8192,
# 128, causal), 0.953x at (1, 16, 16384, 128), 0.936x at (4, 16, 4096, 64, causal); decode step 57 at 0.988x of
# cuDNN at (64, 64, 8, 128, 1024, bf16). One H200, clocks left alone; caches flushed between replay passes.
# Predictions, written before the call:
#  - D = 128, causal (both shapes): both kernels' SMs idle under 3 % of the elapsed cycles and within 1 point of
#    each other; step 53's warp instructions 1.03x-1.06x FA3's; its mean active cycles over FA3's within 1 % of
#    the time ratio. So the causal gap is the loop, not the schedule.
#  - D = 128, (1, 16, 16384, 128): instructions 1.08x-1.12x FA3's (static 470 against 422 a 128 keys); idle shares
#    alike.
#  - (4, 16, 4096, 64, causal): instructions within 0.97x-1.03x (static 410-415 against 417); step 53's SMs idle
#    2-5 points more than FA3's (the counter's 192-row tiles of unequal length): the schedule.
#  - Decode (64, 64, 8, 128, 1024) and (64, 28, 4, 128, 1024): cuDNN's main kernel keeps the DRAM busier (its
#    throughput 1-2 points higher), and step 57's 512 / 256 CTAs (1.94 / 0.97 waves of two an SM) leave its SMs
#    idle 3 or more points longer.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-02-launch-by-launch
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
( python -c "from lab.kernels import build; from lab.kernels.manifest import get; print(build.build_variant(get('two_stages_three_wgs_d64')).ok)" > /tmp/b1.log 2>&1 ) &
( python -c "from lab.kernels import variants; variants.load('tensor_maps_prefetched'); print('ok')" > /tmp/b2.log 2>&1 ) &
# The metrics this ncu knows, so that one unknown name does not take a whole capture down.
$NCU --query-metrics --chip gh100 2>/dev/null | awk '{print $1}' > /tmp/known.txt
S=smsp__average_warps_issue_stalled
WANT="gpu__time_duration.sum sm__cycles_elapsed.max sm__cycles_active.avg sm__cycles_active.min sm__cycles_active.max
smsp__inst_executed.sum smsp__issue_active.avg.per_cycle_active smsp__warps_active.avg.per_cycle_active
sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active sm__pipe_tensor_op_gmma_cycles_active.sum
smsp__inst_executed_pipe_alu.sum smsp__inst_executed_pipe_fma.sum smsp__inst_executed_pipe_fmaheavy.sum
smsp__inst_executed_pipe_xu.sum smsp__inst_executed_pipe_uniform.sum smsp__inst_executed_pipe_lsu.sum
smsp__inst_executed_pipe_adu.sum smsp__inst_executed_pipe_cbu.sum
launch__grid_size launch__block_size launch__registers_per_thread launch__waves_per_multiprocessor
dram__bytes_read.sum dram__throughput.avg.pct_of_peak_sustained_elapsed lts__t_sectors_op_read.sum"
for r in barrier long_scoreboard short_scoreboard wait mio_throttle math_pipe_throttle not_selected selected sleeping dispatch_stall no_instruction; do
  WANT="$WANT ${S}_${r}_per_issue_active.ratio"; done
M=""; for m in $WANT; do grep -qx "${m%%.*}" /tmp/known.txt && M="$M,$m" || echo "unknown metric: $m"; done; M=${M#,}
wait; cat /tmp/b1.log /tmp/b2.log | tail -3; echo "built $(( $(date +%s)-T0 )) s"
for shape in 1,16,16384,128,causal 2,16,8192,128,causal 1,16,16384,128 4,16,4096,64,causal; do
  timeout 100 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --page raw --print-units base \
    python $E/prof_pair.py two_stages_three_wgs_d64 flash_attn3 $shape > /tmp/ncu_${shape//,/_}.csv 2>&1
  echo "ncu $shape rc=$? $(( $(date +%s)-T0 )) s"; done
for shape in 64,64,8,128,1024,bf16 64,28,4,128,1024,bf16; do
  timeout 100 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --page raw --print-units base \
    python -m lab.measure.decode_profile --target tensor_maps_prefetched,sdpa_cudnn --shape $shape \
    > /tmp/ncu_decode_${shape//,/_}.csv 2>&1
  echo "ncu decode $shape rc=$? $(( $(date +%s)-T0 )) s"; done
python $E/compare.py /tmp/ncu_*.csv > $OUT/compare.txt 2>&1
( cd /tmp && tar czf $OUT/ncu.tgz ncu_*.csv )
grep -E "^==|duration|inst_executed.sum|cycles_active.avg|derived|unknown" $OUT/compare.txt | cut -c1-200
