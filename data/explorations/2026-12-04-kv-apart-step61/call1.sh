# Device call (issue 46), 2026-12-04: two ideas on step 61's D = 128 loop, as exploration macros of explore.patch
# (fa/pipeline.cuh, fa/tma.cuh, fa/mma_attention.cuh and step 61's twin; every macro off, the twin compiles to the
# step's SASS, checked on the CPU machine):
# - FA_EXP_KV_APART=1: K and V of a ring stage land and go back apart (fa::KvRingApart, FlashAttention-3's two
#   pipelines): K_j back once S_j has landed, V_{j-1} once P_{j-1} V_{j-1} has; O still takes the work tile's last K.
#   ap3 keeps three stages, ap2 takes two (FA_TILE_STAGES_D128=2). On step 48 (../2026-11-28-kv-apart-d128 call2)
#   two stages apart ran 1.016x-1.023x over step 48 where each query head had its own K/V head and 0.977x-0.987x
#   with 8 K/V heads; three stages apart 0.993x-1.000x.
# - FA_EXP_SOFTMAX_ORDER=1 with FA_EXP_MAX_CHAINS=4 (mc4): the softmax in two phases (both rows' maxima in four
#   partial chains a row, then the exponentials), the warp vote between them and two straight paths to the loop's
#   end; 428 instructions a warp per 128 keys against 421.
# Predictions (hot, paired rounds, s61 over each; > 1: that form faster), written before the call:
# - ap2: 1.01x-1.025x at the D = 128 rows with one K/V head a query head, causal or not; 0.975x-0.99x at the two
#   grouped bf16 rows; 0.995x-1.005x at (4, 16, 4096, 64) (D = 64 unchanged).
# - ap3: 0.99x-1.005x everywhere.
# - mc4: 0.99x-1.01x (the max's chain is not what the loop waits on); above 1.01x would say the softmax's latency
#   before its first exponential is on the critical path.
# - All three pass the 380-case grid, spill-free.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-04-kv-apart-step61
git apply --check -R $E/explore.patch 2>/dev/null || git apply $E/explore.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s61": ["conditional_rescale", {"FA_EXP_KV_APART": 0}],
  "ap2": ["conditional_rescale", {"FA_EXP_KV_APART": 1, "FA_TILE_STAGES_D128": 2}],
  "ap3": ["conditional_rescale", {"FA_EXP_KV_APART": 1}],
  "mc4": ["conditional_rescale", {"FA_EXP_SOFTMAX_ORDER": 1, "FA_EXP_MAX_CHAINS": 4}]}'
timeout 240 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|FAILED|built|BUILD" $OUT/check.txt | cut -c1-200
grep -qE "[1-9][0-9]* failed|BUILD FAILED" $OUT/check.txt && { echo "a check failed: timing the rest"; }
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "4,16,4096,128,causal",
  "2,16,8192,128,causal", "1,16,16384,128,causal", "16,16,1024,128,causal", "1,32,8192,128,causal,kv8,bf16",
  "4,32,2048,128,causal,kv8,bf16", "4,16,4096,64"]'
timeout ${TIME_END:-280} python $X/exp.py time 1.5 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-330 $OUT/time.txt | grep -v built
