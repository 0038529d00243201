# Device call 7 (issue 46), 2026-12-04. call6: d3 (the shifted lazy max, no vote, no rescale) 1.018x-1.048x over step
# 61, near d0; vt3 within 0.005 of call5 (0.978x-1.018x). So the vote and its branch at the step's top cost vt3
# 1.5-4 %. In vt3's SASS the vote reads alpha, whose two exponentials ptxas issues last in the body (they feed only
# the sums' FFMAs), so the top waits on them before the vote, the K barrier and the turn. explore6.patch adds
# FA_EXP_VOTE_AT_TOP=2: the vote on whether a row's max moved (a compare of the max before and after the tile's softmax),
# alpha read only on the rescaling path. vt4 = that with FA_EXP_LAZY_SHIFT=3 (416 instructions a warp per 128 keys).
# Predictions (hot, paired rounds, s61 over each), written before the call:
# - vt4 1.01x-1.04x at D = 128, between vt3 and d3 (how much of the 1.5-4 % was the wait on alpha); passes the grid;
# - d3 within 0.006 of call6.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-kv-apart-step61
git apply --check -R $E/explore6.patch 2>/dev/null || git apply $E/explore6.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s61": ["conditional_rescale", {"FA_EXP_KV_APART": 0}],
  "d3": ["conditional_rescale", {"FA_EXP_LAZY_SHIFT": 3, "FA_EXP_DROP_RESCALE": 1}],
  "vt4": ["conditional_rescale", {"FA_EXP_VOTE_AT_TOP": 2, "FA_EXP_LAZY_SHIFT": 3}]}'
timeout 240 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|BUILD" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128", "1,16,16384,128", "8,16,512,128", "4,16,4096,128,causal",
  "16,16,1024,128,causal", "1,32,8192,128,causal,kv8,bf16"]'
timeout ${TIME_END:-200} python $X/exp.py time 1.5 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
python - $OUT/time.txt <<'PY'
import re, sys
for line in open(sys.argv[1]):
    if line.startswith("built"): continue
    cells = re.findall(r"s61/(\w+) ([0-9.]+) \[", line)
    print(f"{line.split()[0]:32s} " + " ".join(f"{k}={v}" for k, v in cells))
PY
