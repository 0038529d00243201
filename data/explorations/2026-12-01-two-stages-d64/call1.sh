# Issue 46: why step 52's static three-warpgroup tile runs 1.3-2.2 % faster with two K/V stages than with three
# (../2026-11-29-d64-stages, call of 2026-12-01: st2 over s52 1.015x at (4, 16, 4096, 64), 1.016x at GPT-2's
# (1, 12, 8192, causal, bf16), 1.022x at Falcon-7B's, 1.016x at (8, 16, 4096, causal); 1.00x (0.996x, 1.002x) where
# the call takes the counter's kernel, kind 4). Its loop issues 411 instructions a tile against 410 (cuobjdump, both
# fp16 builds), so the instruction stream does not say. Nsight Compute of one launch each, s52 and st2, at
# (4, 16, 4096, 64) and GPT-2's row (static list) and (4, 16, 4096, 64, causal) (counter).
# Written before the call, what each candidate predicts for st2 against s52 at the static shapes:
#   (a) L2: the producers' third tile in flight costs L2 hits: lts hit rate up, DRAM bytes down at st2;
#   (b) the carve-out: 88 KB of shared memory a CTA instead of 120 gives L1 more (shared_mem_config_size down),
#       which matters only if something reads through L1 (O's stores, the queue's words): l1tex hit rate differs;
#   (c) the SM: the same instructions in fewer active cycles, the consumers' stall mix moving (barrier or long
#       scoreboard down); the tensor pipe's active share up by the speedup.
# Expected: (c) without (a) or (b); at the counter's shape no change beyond 0.5 %.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-01-two-stages-d64
P=data/explorations/2026-11-29-q-double-buffer/prof_one.py
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s52": ["three_wgs_queue_causal_d64", {}], "st2": ["three_wgs_queue_causal_d64", {"FA_TILE_STAGES_D64": 2}]}'
export EXP_SHAPES='["4,16,4096,64"]'
timeout 120 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|FAILED|built|BUILD" $OUT/check.txt | cut -c1-200 | head -6
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
S=smsp__average_warps_issue_stalled
M=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,smsp__inst_executed.sum
M=$M,lts__t_sector_hit_rate.pct,lts__t_sectors.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
M=$M,dram__bytes_read.sum,dram__bytes_write.sum,launch__shared_mem_config_size,launch__shared_mem_per_block
M=$M,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
M=$M,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active
for r in long_scoreboard barrier wait math_pipe_throttle short_scoreboard mio_throttle lg_throttle membar sleeping dispatch_stall no_instruction selected; do
  M=$M,${S}_${r}_per_issue_active.ratio; done
for shape in 4,16,4096,64 1,12,8192,64,causal,bf16 4,16,4096,64,causal; do for c in s52 st2; do
  [ $(( $(date +%s)-T0 )) -lt 300 ] && timeout 60 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv \
    --print-units base python $P $c $shape > $OUT/ncu_${c}_${shape//,/_}.csv 2>&1
  echo "ncu $c $shape rc=$? $(( $(date +%s)-T0 )) s"; done; done
python $E/ncu_compare.py $OUT/ncu_*.csv > $OUT/ncu_compare.txt; grep "st2/s52" $OUT/ncu_compare.txt | sed -E 's/^(\S+)\s.*st2\/s52 /\1 /' | sed -E 's/smsp__average_warps_issue_stalled/stall/'
