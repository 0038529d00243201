# Device call 9 (issue 46), prepared 2026-12-04 on the CPU machine after the session's device time ran out: NOT YET RUN.
# Calls 6-8: without the vote the shifted lazy max (d3) runs 1.017x-1.052x over step 61; with the vote at the step's top
# (vt3) or on the loop's exit (ex1) most of that is lost, though no branch is ever taken. FlashAttention-3 rescales O
# between its S GEMM's issue and its P V GEMM's, while the tensor cores work on S. explore8.patch adds
# FA_EXP_VOTE_AFTER_S: the last tile's vote and O's rescale between S_j's issue and P_{j-1} V_{j-1}'s, inside the
# turn (a wgmma fence after it), so the vote's latency and branch overlap S_j. va3 = that with FA_EXP_LAZY_SHIFT=3 (414
# instructions a warp per 128 keys, the maxima and exponentials interleaved as in d3; no spills, no wgmma
# serialized), va1 with step 61's selected alpha (420, every max first), vu3 as va3 with the vote read back through a
# shuffle (FA_EXP_VOTE_AFTER_S=2, 417). In both ptxas issues the vote after the turn's barrier, before S's first HGMMA,
# with no divergence check, and the branch over the FMULs right after S's last HGMMA.
# Predictions (hot, paired rounds, s61 over each), written before the call:
# - va3 1.015x-1.04x at the long D = 128 rows (most of d3's 1.017x-1.052x), 0.995x-1.02x at (8, 16, 512, 128) and
#   (16, 16, 1024, 128, causal), where vt3 lost 2.2 %; passes rare_path.py and the grid (now with its rising-max cases);
# - va1 0.995x-1.015x (the select keeps every max first, as in d1);
# - vu3 within 0.005 of va3 (the check and the vote's place are a few instructions while S computes);
# - d3 and vt3 within 0.006 of calls 6-8.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-kv-apart-step61
git apply --check -R $E/explore8.patch 2>/dev/null || git apply $E/explore8.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s61": ["conditional_rescale", {"FA_EXP_KV_APART": 0}],
  "va3": ["conditional_rescale", {"FA_EXP_VOTE_AFTER_S": 1, "FA_EXP_LAZY_SHIFT": 3}],
  "va1": ["conditional_rescale", {"FA_EXP_VOTE_AFTER_S": 1}],
  "vu3": ["conditional_rescale", {"FA_EXP_VOTE_AFTER_S": 2, "FA_EXP_LAZY_SHIFT": 3}],
  "vt3": ["conditional_rescale", {"FA_EXP_VOTE_AT_TOP": 1, "FA_EXP_LAZY_SHIFT": 3}],
  "d3": ["conditional_rescale", {"FA_EXP_LAZY_SHIFT": 3, "FA_EXP_DROP_RESCALE": 1}]}'
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
