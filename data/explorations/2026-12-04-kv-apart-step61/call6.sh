# Device call 6 (issue 46), 2026-12-04. call5: vt3 (alpha exactly 1 where the max stays, the vote at the next step's
# top; d0's interleaved order) 1.005x-1.011x over step 61 at the long non-causal D = 128 rows, 0.996x-1.006x causal,
# 1.017x-1.019x at the grouped rows, 0.976x-0.978x at (8, 16, 512, 128) and (16, 16, 1024, 128, causal); ls3 (the
# same alpha, the vote where it was) 0.973x-0.986x, but 1.018x-1.022x at the grouped rows. d0 1.017x-1.044x. The order
# alone does not give d0's time. d3 (explore5.patch's FA_EXP_LAZY_SHIFT=3 with FA_EXP_DROP_RESCALE=1: the shifted lazy
# max, alpha from the difference, no vote and no rescale; 410 instructions, d0's interleaved order; right wherever no
# max moves after the first tile) separates the vote's cost from the lazy max's.
# Predictions (hot, paired rounds, s61 over each), written before the call:
# - d3 1.03x-1.045x at D = 128 (near d0: the vote and its branch cost vt3 the rest), passes the 380-case grid; if
#   d3 runs as vt3 instead, the shifted max itself costs what the vote was thought to;
# - vt3 within 0.005 of call5 at each row (another GPU, perhaps); d0 within 0.006 of calls 3-5.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-kv-apart-step61
git apply --check -R $E/explore5.patch 2>/dev/null || git apply $E/explore5.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s61": ["conditional_rescale", {"FA_EXP_KV_APART": 0}],
  "d3": ["conditional_rescale", {"FA_EXP_LAZY_SHIFT": 3, "FA_EXP_DROP_RESCALE": 1}],
  "vt3": ["conditional_rescale", {"FA_EXP_VOTE_AT_TOP": 1, "FA_EXP_LAZY_SHIFT": 3}],
  "d0": ["conditional_rescale", {"FA_CONDITIONAL_RESCALE": 0, "FA_EXP_DROP_RESCALE": 1}]}'
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
