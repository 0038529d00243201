# Call 2 (issue 46): call 1's Nsight Compute counters put the three-warpgroup tile's loss at causal D = 64 in the
# launch's tail: at (4, 16, 4096, 64, causal) its SMs are active 0.880 of the busiest one's cycles on average
# (the least busy 0.80; FA3 0.982 and 0.967), the static list's 704 heavy-light pairs over 132 CTAs (5 or 6
# each: 5.33 / 6 = 0.89). The counter (qc24) was not taken there: its L2 sections (16 heads of 22 tiles in the
# last one, 352 < 4 x 132) send the launch to the static list. So: the counter over all heads, heaviest first,
# without sections (FA_QUEUE_L2_SECTIONS = 0; qn24), against the static list at 152 (st) and 160 (st24)
# registers. Predicted: qn24 1.05x-1.12x over st24 where the static fill is 0.89 or less, within 0.98x-1.02x
# where it is 0.97 or more; its SMs' mean active share 0.95 or more. Then ncu of qn24 as in call 1.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-11-29-q-double-buffer
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
git apply $E/q_buffers.patch || exit 1
F='"FA_TILE_THREE_WGS_CAUSAL_FILL_D64": 0'
export EXP_CONFIGS='{"st24": ["three_wgs_causal_d64", {'"$F"', "FA_EXP_THREE_WGS_PRODUCER_REGS": 24}],
  "s51": ["three_wgs_causal_d64", {}],
  "st": ["three_wgs_causal_d64", {'"$F"'}],
  "qn24": ["three_wgs_causal_d64", {'"$F"', "FA_EXP_THREE_WGS_PRODUCER_REGS": 24, "FA_EXP_THREE_WGS_COUNTER": 1, "FA_QUEUE_L2_SECTIONS": 0}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "1,16,16384,64,causal", "2,32,4096,64,causal", "8,16,4096,64,causal",
  "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16", "16,16,4096,64,causal"]'
EXP_ONLY=qn24 timeout 100 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "built|check|FAIL" $OUT/check.txt | cut -c1-160 | tail -4
grep -qE "[1-9][0-9]* failed" $OUT/check.txt && { echo "a check failed: no timing"; exit 1; }
timeout $(( 190 - ($(date +%s)-T0) )) python $X/exp.py time 0.8 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,sm__cycles_elapsed.max,smsp__inst_executed.sum
[ $(( $(date +%s)-T0 )) -lt 215 ] && timeout 40 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --print-units base \
  python $E/prof_one.py qn24 4,16,4096,64,causal > $OUT/ncu_qn24.csv 2>&1; echo "ncu rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-400 $OUT/time.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
python $E/ncu_balance.py $OUT/ncu_*.csv
