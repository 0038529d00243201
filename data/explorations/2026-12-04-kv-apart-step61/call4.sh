# Device call 4 (issue 46), 2026-12-04. call3 (GPU-?, call3/gpu.txt) split the rescale bound: over step 61, the lazy
# max with the vote and the rescale left out (d1) ran 1.000x-1.009x, step 60's eager max with the rescale left out (d0)
# 1.021x-1.043x at D = 128. So most of the bound is not the FMULs nor the branch but the eager loop's order: in d0's
# SASS (and step 60's) row 1's max chain runs beside row 0's exponentials; in step 61's (and d1's) all 71 FMNMX come
# before the first exponential. On the CPU (listings here, order.py): either the lazy max's select or a vote on alpha in
# the loop body is enough to make ptxas take every max first (the chain to the branch is the body's longest, so its
# list scheduler puts it first). explore4.patch adds to explore3.patch:
# - FA_EXP_LAZY_SHIFT=2: the lazy max as one shifted FMNMX, m = max(m, tile max - 8 / scale_log2) (the max moves only
#   where the tile raises it by more than 2^8, and then to 2^8 below the tile's max), alpha = exp2(m_old - m) always
#   (exactly 1 where it stays); =1 the same with alpha selected;
# - FA_EXP_VOTE_AT_TOP=1: the vote and O's rescale at the top of the next step and before the last P V (P V of the
#   tile before has been waited on there), so no branch in the loop body hangs on the maxima.
# Configurations against s61: vt2 (both: 412 instructions a warp per 128 keys, the maxima and exponentials interleaved
# as in d0), vt1 (the vote at the top, the select kept: 420, every max first), ls2 (the shifted max, the vote where
# it was: 413, every max first), d0 again (the bound; wrong results).
# Predictions (hot, paired rounds, s61 over each), written before the call:
# - vt2 1.02x-1.04x at the D = 128 rows (most of d0's 1.021x-1.043x), passes the 380-case grid;
# - vt1 and ls2 0.995x-1.01x (the order unchanged), pass the grid;
# - d0 within 0.005 of call3 at each row.
# - The counter's causal D = 64 row (its overlapped loop has the same vote): vt2 1.00x-1.01x.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-kv-apart-step61
git apply --check -R $E/explore4.patch 2>/dev/null || git apply $E/explore4.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s61": ["conditional_rescale", {"FA_EXP_KV_APART": 0}],
  "vt2": ["conditional_rescale", {"FA_EXP_VOTE_AT_TOP": 1, "FA_EXP_LAZY_SHIFT": 2}],
  "vt1": ["conditional_rescale", {"FA_EXP_VOTE_AT_TOP": 1}],
  "ls2": ["conditional_rescale", {"FA_EXP_LAZY_SHIFT": 2}],
  "d0": ["conditional_rescale", {"FA_CONDITIONAL_RESCALE": 0, "FA_EXP_DROP_RESCALE": 1}]}'
timeout 240 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|built|BUILD" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "4,16,4096,128,causal",
  "1,16,16384,128,causal", "16,16,1024,128,causal", "1,32,8192,128,causal,kv8,bf16", "4,32,2048,128,causal,kv8,bf16",
  "4,16,4096,64,causal"]'
timeout ${TIME_END:-300} python $X/exp.py time 1.5 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
python - $OUT/time.txt <<'PY'
import re, sys
for line in open(sys.argv[1]):
    if line.startswith("built"): continue
    cells = re.findall(r"s61/(\w+) ([0-9.]+) \[", line)
    print(f"{line.split()[0]:32s} " + " ".join(f"{k}={v}" for k, v in cells))
PY
