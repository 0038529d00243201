# Call 4 (issue 46): the rule read off call 2 (static_fill.txt), timed on shapes it was not read from. Predicted
# before the call, by "causal, S >= 4096, the static pairs' last-round fill >= 0.95" (static_fill.py's fill):
#   gain (fill >= 0.95): (16, 16, 4096) 0.97, (2, 12, 8192) 1.00, (3, 16, 8192) 1.00, (1, 24, 16384) 0.98
#   loss (fill < 0.95):  (2, 16, 8192) 0.89, (2, 32, 4096) 0.89, (1, 32, 8192) 0.89, (1, 16, 8192) 0.89,
#                        (2, 8, 16384) 0.87
# Configurations: step 50 (s50) and the three-warpgroup tile on every causal call through the static pairs
# (st, draft-causal-three-wgs; its code passed the correctness grid in call 2). Hot timing only.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
H=data/explorations/2026-11-29-ftz-row-max
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
git apply $H/draft-causal-three-wgs/causal_three_wgs.patch || exit 1
export EXP_CONFIGS='{"s50": ["pipeline_state_d128", {}], "st": ["pipeline_state_d128", {"FA_EXP_THREE_WGS_CAUSAL": 1}]}'
export EXP_SHAPES='["16,16,4096,64,causal", "2,12,8192,64,causal,bf16", "3,16,8192,64,causal", "1,24,16384,64,causal",
  "2,16,8192,64,causal", "2,32,4096,64,causal", "1,32,8192,64,causal", "1,16,8192,64,causal", "2,8,16384,64,causal"]'
timeout 200 python $X/exp.py time 0.8 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-300 $OUT/time.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
