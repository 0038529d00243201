# Device call 10 (issue 46), 2026-12-04. Call 9: va3 (the shifted max, FA_EXP_LAZY_SHIFT=3, and the last tile's vote
# and O's rescale between S_j's issue and P_{j-1} V_{j-1}'s, FA_EXP_VOTE_AFTER_S=1) 1.021x-1.030x over step 61 at the
# long non-causal D = 128 rows, 1.013x-1.042x causal and grouped, but 0.985x at (8, 16, 512, 128).
# Form 3's shift changes no decision: m' = max(m, tile max - c) is the running max less c, so it moves exactly when the
# running max rises (no threshold left); alpha = exp2((m - m') * scale) is exactly 1 where it stays, which is what the
# vote reads. explore9.patch adds FA_EXP_LAZY_SHIFT=4 (the same without the shift: the eager max, alpha from the
# difference; 412 instructions a warp per 128 keys against va3's 414) and FA_EXP_VOTE_AFTER_S=3 (O rescaled after S_j's
# issue every step, no vote: FlashAttention-3's form; 477 and 475, the 64 FMULs before P V's wait).
# Predictions (hot, paired rounds, s61 over each), written before the call:
# - va3 within 0.006 of call 9 at every row where call 9 saw >= 2 %; (8, 16, 512, 128) below 1.00x again;
# - va4 within 0.005 of va3 everywhere (the same decisions, two instructions fewer); passes rare_path.py and the grid;
# - ra3 and ra4 1.00x-1.025x at the long D = 128 rows, below va3 there by 0.005-0.02 (the FMULs share the issue slots
#   with the other warpgroup's exponentials), and within 0.005 of each other.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-kv-apart-step61
git apply --check -R $E/explore9.patch 2>/dev/null || git apply $E/explore9.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s61": ["conditional_rescale", {"FA_EXP_KV_APART": 0}],
  "va3": ["conditional_rescale", {"FA_EXP_VOTE_AFTER_S": 1, "FA_EXP_LAZY_SHIFT": 3}],
  "va4": ["conditional_rescale", {"FA_EXP_VOTE_AFTER_S": 1, "FA_EXP_LAZY_SHIFT": 4}],
  "ra3": ["conditional_rescale", {"FA_EXP_VOTE_AFTER_S": 3, "FA_EXP_LAZY_SHIFT": 3}],
  "ra4": ["conditional_rescale", {"FA_EXP_VOTE_AFTER_S": 3, "FA_EXP_LAZY_SHIFT": 4}]}'
timeout 120 python $E/rare_path.py > $OUT/rare_path.txt 2>&1; echo "rare rc=$? $(( $(date +%s)-T0 )) s"
grep -v "^built" $OUT/rare_path.txt | cut -c1-220
timeout 120 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|BUILD" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "8,16,512,128",
  "4,16,4096,128,causal", "1,16,16384,128,causal", "16,16,1024,128,causal", "1,32,8192,128,causal,kv8,bf16",
  "4,32,2048,128,causal,kv8,bf16", "4,16,4096,64,causal", "4,16,4096,64"]'
timeout ${TIME_END:-300} python $X/exp.py time 1.5 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
