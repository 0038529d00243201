# Device call 1 of data/explorations/2026-12-04-launch-by-launch-step62 (issue 46), prepared 2026-12-04 on the CPU
# machine after the session's device time was spent: NOT YET RUN. Run from the repository root with carry
# [".whl", ".fa3"]. Nsight Compute over one launch each of step 62 (rescale_under_s) and FlashAttention-3 on the same
# inputs (../2026-12-02-launch-by-launch's prof_pair.py and compare.py: two warm-up launches, one profiled, caches
# flushed between replay passes, clocks left alone), at the rows where step 62's run has FA3 ahead: the long D = 128
# rows (0.976x-0.991x hot), causal (4, 16, 4096, 128) (0.983x), and the two D = 64 models rows of issue 46's
# target 2 (Falcon-7B 0.941x, GPT-2 at S = 8192 0.964x), plus (4, 16, 4096, 128), where step 62 is level (1.003x).
# That exploration's call 1 split step 53's gap into idle SMs (the schedule) and busier SMs (the loop); steps 58-62
# changed the loop since.
# Predictions, written before the call:
# - (4, 16, 4096, 128) and (1, 16, 16384, 128): step 62's warp instructions 0.96x-1.00x FA3's (static 414 against
#   422 a 128 keys); SMs idle within a point of each other; at (1, 16, 16384, 128) its active cycles 1.005x-1.02x
#   FA3's: the remaining gap is issue rate, not instructions.
# - causal (4, 16, 4096, 128), (1, 16, 16384, 128), (2, 16, 8192, 128): step 62's SMs idle 4-5 % of the elapsed
#   cycles against FA3's 2-2.5 % (step 27's static list of heavy-light pairs, as for step 53: 0.874 min / max active),
#   its instructions 0.93x-0.99x FA3's: at causal D = 128 the schedule is now the larger part of the gap.
# - Falcon-7B (1, 71, 8192, 64, causal, kv1, bf16) and GPT-2 (1, 12, 8192, 64, causal, bf16) (the static list's
#   three-warpgroup tile, in series): instructions 0.95x-1.05x FA3's; active cycles 1.03x-1.07x: the serial loop's
#   waits (barrier and long-scoreboard stalls a warp an issue above FA3's), not the schedule.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-02-launch-by-launch
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
( python -c "from lab.kernels import build; from lab.kernels.manifest import get; print(build.build_variant(get('rescale_under_s')).ok)" > /tmp/b1.log 2>&1 ) &
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
wait; tail -3 /tmp/b1.log; echo "built $(( $(date +%s)-T0 )) s"
for shape in 4,16,4096,128 1,16,16384,128 4,16,4096,128,causal 1,16,16384,128,causal 2,16,8192,128,causal \
    1,71,8192,64,causal,kv1,bf16 1,12,8192,64,causal,bf16; do
  timeout 100 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --page raw --print-units base \
    python $E/prof_pair.py rescale_under_s flash_attn3 $shape > /tmp/ncu_${shape//,/_}.csv 2>&1
  echo "ncu $shape rc=$? $(( $(date +%s)-T0 )) s"; done
python $E/compare.py /tmp/ncu_*.csv > $OUT/compare.txt 2>&1
( cd /tmp && tar czf $OUT/ncu.tgz ncu_*.csv )
grep -E "^==|duration|inst_executed.sum|cycles_active.avg|derived|unknown" $OUT/compare.txt | cut -c1-200
