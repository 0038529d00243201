# Call 2 (issue 46): step 49's three consumer warpgroups (192 query rows a CTA, FA3's causal D = 64 tile) for causal
# D = 64 calls too (draft-causal-three-wgs/causal_three_wgs.patch; knobs in fa/tile_size.cuh and the twin):
# FA_EXP_THREE_WGS_CAUSAL = n > 0 takes it from n 192-row work tiles an SM (S >= 2048), -1 always;
# FA_EXP_THREE_WGS_COUNTER = 1 hands its tiles out by the counter (heaviest first) instead of step 27's static
# heavy-light pairs; FA_EXP_THREE_WGS_PRODUCER_REGS = 24 gives a consumer 160 registers (the counter's kernel spills
# 8 B at 152). The correctness grid on the forced configurations, then hot timing.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
H=data/explorations/2026-11-29-ftz-row-max
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
git apply $H/draft-causal-three-wgs/causal_three_wgs.patch || exit 1
export EXP_CONFIGS='{"s50": ["pipeline_state_d128", {}],
  "st8": ["pipeline_state_d128", {"FA_EXP_THREE_WGS_CAUSAL": 8}],
  "st1": ["pipeline_state_d128", {"FA_EXP_THREE_WGS_CAUSAL": 1}],
  "q1": ["pipeline_state_d128", {"FA_EXP_THREE_WGS_CAUSAL": 1, "FA_EXP_THREE_WGS_COUNTER": 1, "FA_EXP_THREE_WGS_PRODUCER_REGS": 24}],
  "st_all": ["pipeline_state_d128", {"FA_EXP_THREE_WGS_CAUSAL": -1}],
  "q_all": ["pipeline_state_d128", {"FA_EXP_THREE_WGS_CAUSAL": -1, "FA_EXP_THREE_WGS_COUNTER": 1, "FA_EXP_THREE_WGS_PRODUCER_REGS": 24}]}'
export EXP_SHAPES='["4,16,4096,64,causal", "1,12,8192,64,causal,bf16", "4,12,2048,64,causal,bf16", "4,71,2048,64,causal,kv1,bf16",
  "1,71,8192,64,causal,kv1,bf16", "4,16,2048,64,causal", "1,16,16384,64,causal", "8,16,4096,64,causal", "4,16,4096,64"]'
EXP_ONLY=st_all,q_all,st1,q1 timeout 240 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "built|check|FAIL" $OUT/check.txt | cut -c1-160 | tail -12
EXP_ONLY=s50,st8,st1,q1 timeout $(( 400 - ($(date +%s)-T0) )) python $X/exp.py time 0.8 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-500 $OUT/time.txt | grep -v built | sed -E 's/ \[[0-9.]+, [0-9.]+\]//g'
