# One device call (issue 46, 2026-12-03): how much time O's rescale costs step 60's D = 128 loop, where ptxas issues
# its 64 FMULs as one block at the loop's end (order.py: FlashAttention-3's loops spread theirs among the
# exponentials after P V's wait). nr (no_rescale.patch, FA_EXP_NO_RESCALE=1) leaves the rescale out of the overlapped
# loop: its results are wrong, so it is timed only, never checked; it bounds what any placement of those FMULs can buy.
# Both builds fp16 only (FA_SASS_FP16_ONLY=1), from the twin as exp.py builds them.
# Predictions, written before the call (hot, paired rounds, s60 over nr; < 1: nr faster):
#   if the block at the loop's end costs its issue slots on the path between P V's wait and the next turn (64 of about
#   220 instructions there), nr 1.02x-1.06x faster at the D = 128 rows, non-causal and causal; if the tensor pipe,
#   not that path, bounds the loop (as the lazy rescale's loss suggested: ../2026-12-01-lazy-rescale-hopper), within
#   1.00x-1.01x. The control (4, 16, 4096, 64) runs the serial loop, which the patch leaves alone: 0.995x-1.005x.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-03-d128-rescale-placement
git apply $E/no_rescale.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s60": ["one_loop_causal_short_d64", {"FA_SASS_FP16_ONLY": 1}],
  "nr": ["one_loop_causal_short_d64", {"FA_SASS_FP16_ONLY": 1, "FA_EXP_NO_RESCALE": 1}]}'
export EXP_SHAPES='["4,16,4096,128", "1,16,16384,128", "4,16,4096,128,causal", "4,16,4096,64"]'
timeout ${TIME_END:-330} python $X/exp.py time 1.2 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-260 $OUT/time.txt
