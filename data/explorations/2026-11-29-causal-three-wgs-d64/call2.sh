# Call 2: call 1 again with the counter knob in the twin too (configurations build kernels/knockouts/, not the step file:
# in call 1 FA_EXP_THREE_WGS_COUNTER did nothing, so its cq configurations walked the static list). knobs.patch lets causal calls take it (FA_EXP_THREE_WGS_CAUSAL), lets its kernel take tiles from the
# counter queue, longest first (FA_EXP_THREE_WGS_COUNTER), and sets its producer's registers (40: a consumer 152,
# the queue's kernel spills 8 B; 32: a consumer 160, no spills). The grid threshold is set to 1 tile an SM so
# that every timed shape takes it. Correctness grid on each configuration, then hot timing against step 50.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
D=data/explorations/2026-11-29-causal-three-wgs-d64
git apply $D/knobs.patch || exit 1
T0=$(date +%s)
F='"FA_EXP_THREE_WGS_CAUSAL": 1, "FA_TILE_THREE_WGS_TILES_PER_SM_D64": 1'
export EXP_CONFIGS='{"s50": ["pipeline_state_d128", {}], "cs152": ["pipeline_state_d128", {'"$F"'}],
  "cq152": ["pipeline_state_d128", {'"$F"', "FA_EXP_THREE_WGS_COUNTER": 1}],
  "cq160": ["pipeline_state_d128", {'"$F"', "FA_EXP_THREE_WGS_COUNTER": 1, "FA_EXP_THREE_WGS_PRODUCER_REGS": 32}],
  "cs160": ["pipeline_state_d128", {'"$F"', "FA_EXP_THREE_WGS_PRODUCER_REGS": 32}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "2,16,8192,64,causal", "1,16,16384,64,causal", "4,16,2048,64,causal",
  "1,71,8192,64,causal,kv1,bf16", "1,12,8192,64,causal,bf16", "4,71,2048,64,causal,kv1,bf16",
  "4,12,2048,64,causal,bf16"]'
EXP_ONLY=cq152,cq160 timeout 300 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "built|check|FAIL|passed" $OUT/check.txt | cut -c1-200 | tail -12
timeout $(( 470 - ($(date +%s)-T0) )) python $X/exp.py time 0.5 > $OUT/time_counter.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-400 $OUT/time_counter.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
