# Device call (issue 46), 2026-12-03: FlashAttention-4's conditional rescale on step 60's own loop, not on the split
# softmax of ../2026-12-03-d128-rescale-placement (whose control, sp1, ran 4 % slower than step 60 there, so its
# sp5's 1.016x-1.021x measures the skip net of that cost). cond_rescale.patch (step 60's file and twin, and
# fa::mma_online_softmax's LAZY_MAX, off by default): FA_EXP_COND_RESCALE=1 gives the overlapped D = 128 loop the
# lazy max (the running max moves only where a tile raises it by more than 2^8) and, after P V's wait, P packed first
# and one warp vote that skips O's FMULs where no row of the warp moved; 2 does the same in the counter's overlapped
# D = 64 tile too. The serial D = 64 loop is untouched (step 53's lazy rescale lost there, 0.876x-0.890x).
# Predictions (hot, paired rounds, s60 over each; > 1: that form faster): c1 1.02x-1.05x at the D = 128 rows (above
# sp5's 1.016x-1.021x, below the no-rescale bound 1.047x-1.063x), c1 0.995x-1.005x at the D = 64 rows; c2 as c1 at
# D = 128, 1.00x-1.02x at the causal D = 64 long rows (bound 1.021x-1.026x), 0.995x-1.005x at (4, 16, 4096, 64).
# c1 and c2 pass the 380-case grid.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-03-cond-rescale-at-fmuls
git apply --check -R $E/cond_rescale.patch 2>/dev/null || git apply $E/cond_rescale.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s60": ["one_loop_causal_short_d64", {"FA_EXP_COND_RESCALE": 0}],
  "c1": ["one_loop_causal_short_d64", {"FA_EXP_COND_RESCALE": 1}],
  "c2": ["one_loop_causal_short_d64", {"FA_EXP_COND_RESCALE": 2}]}'
timeout 200 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|FAILED|built|BUILD" $OUT/check.txt | cut -c1-200
grep -qE "[1-9][0-9]* failed|BUILD FAILED" $OUT/check.txt && { echo "a check failed: no timing"; exit 1; }
export EXP_SHAPES='["4,16,4096,128", "1,16,16384,128", "16,16,1024,128", "8,16,512,128", "4,16,4096,128,causal",
  "1,16,16384,128,causal", "1,32,8192,128,causal,kv8,bf16", "4,16,4096,64", "4,16,4096,64,causal",
  "2,16,8192,64,causal", "8,16,512,64,causal"]'
timeout ${TIME_END:-300} python $X/exp.py time 1.5 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-300 $OUT/time.txt | grep -v built
