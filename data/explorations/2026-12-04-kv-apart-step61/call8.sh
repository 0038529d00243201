# Device call 8 (issue 46), 2026-12-04, the session's last device time. After call 7 (the vote at the step's top costs
# 1.5-4 % even when never taken): explore7.patch adds FA_EXP_EXIT_ON_MOVE: the step ends with one reduction over the
# warpgroup's 128 threads (bar.red.or on a named barrier of its own) saying whether some row moved; the loop's own exit
# test reads it, and O is rescaled outside the loop, which then goes on. ex1 = that with FA_EXP_LAZY_SHIFT=3. On the
# CPU its path is 433 instructions a warp per 128 keys, every max first again (the exit test hangs on them) and the S
# GEMM's issues spread out: so the prediction is pessimistic.
# rare_path.py first: inputs whose rows' max jumps by ~29 in base 2 mid-sequence, so the rescale path runs; s61, vt3
# and ex1 must pass, d3 (never rescales) must fail.
# Predictions (hot, paired rounds, s61 over each), written before the call: ex1 0.98x-1.005x at D = 128 (as d1 or
# below); d3 and vt3 within 0.005 of calls 6-7. Every form but d3 passes rare_path.py and the 380-case grid.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-kv-apart-step61
git apply --check -R $E/explore7.patch 2>/dev/null || git apply $E/explore7.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s61": ["conditional_rescale", {"FA_EXP_KV_APART": 0}],
  "ex1": ["conditional_rescale", {"FA_EXP_EXIT_ON_MOVE": 1, "FA_EXP_LAZY_SHIFT": 3}],
  "vt3": ["conditional_rescale", {"FA_EXP_VOTE_AT_TOP": 1, "FA_EXP_LAZY_SHIFT": 3}],
  "d3": ["conditional_rescale", {"FA_EXP_LAZY_SHIFT": 3, "FA_EXP_DROP_RESCALE": 1}]}'
timeout 90 python $E/rare_path.py > $OUT/rare_path.txt 2>&1; echo "rare rc=$? $(( $(date +%s)-T0 )) s"
grep -v "^built" $OUT/rare_path.txt | cut -c1-200
timeout 60 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|BUILD" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128", "1,16,16384,128", "8,16,512,128", "4,16,4096,128,causal",
  "16,16,1024,128,causal", "1,32,8192,128,causal,kv8,bf16"]'
timeout ${TIME_END:-70} python $X/exp.py time 1.2 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
python - $OUT/time.txt <<'PY'
import re, sys
for line in open(sys.argv[1]):
    if line.startswith("built"): continue
    cells = re.findall(r"s61/(\w+) ([0-9.]+) \[", line)
    print(f"{line.split()[0]:32s} " + " ".join(f"{k}={v}" for k, v in cells))
PY
