# Device call 5 (issue 46), 2026-12-04. call4: vt2 0.961x-0.987x, ls2 0.963x-0.989x, vt1 0.977x-1.000x over step 61,
# d0 1.017x-1.047x (call3's within 0.006). The shifted max's alpha, exp2(m_old * s - m_new * s), is compiled as an FFMA
# whose result is m_old * s's rounding error, not 0, so alpha is never 1 and the vote always rescales: vt2 and ls2 ran
# the rescale at every tile. explore5.patch adds FA_EXP_LAZY_SHIFT=3: alpha = exp2((m_old - m_new) * s), exactly
# exp2(0) where the max stays (m_old - m_new is then 0), no select. On the CPU: with the vote at the top (vt3) ptxas
# interleaves row 1's max with row 0's exponentials as in d0 (414 instructions a warp per 128 keys); with the vote where
# it was (ls3) every max comes first and P V's wait moves above every exponential (415).
# Predictions (hot, paired rounds, s61 over each), written before the call:
# - vt3 1.02x-1.04x at the D = 128 rows (d0's order, the skip taken), passes the 380-case grid; if MUFU.EX2 of 0 were
#   not exactly 1, vt3 would rescale every tile and run as vt2 (0.96x-0.99x);
# - ls3 0.98x-1.01x; d0 within 0.006 of calls 3 and 4.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-kv-apart-step61
git apply --check -R $E/explore5.patch 2>/dev/null || git apply $E/explore5.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s61": ["conditional_rescale", {"FA_EXP_KV_APART": 0}],
  "vt3": ["conditional_rescale", {"FA_EXP_VOTE_AT_TOP": 1, "FA_EXP_LAZY_SHIFT": 3}],
  "ls3": ["conditional_rescale", {"FA_EXP_LAZY_SHIFT": 3}],
  "d0": ["conditional_rescale", {"FA_CONDITIONAL_RESCALE": 0, "FA_EXP_DROP_RESCALE": 1}]}'
timeout 240 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|built|BUILD" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "8,16,512,128",
  "4,16,4096,128,causal", "1,16,16384,128,causal", "16,16,1024,128,causal", "1,32,8192,128,causal,kv8,bf16",
  "4,32,2048,128,causal,kv8,bf16", "4,16,4096,64,causal", "4,16,4096,64"]'
timeout ${TIME_END:-300} python $X/exp.py time 1.5 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
python - $OUT/time.txt <<'PY'
import re, sys
for line in open(sys.argv[1]):
    if line.startswith("built"): continue
    cells = re.findall(r"s61/(\w+) ([0-9.]+) \[", line)
    print(f"{line.split()[0]:32s} " + " ".join(f"{k}={v}" for k, v in cells))
PY
