# The next device call (issue 46; drafted 2026-12-03, not yet run): can a form of step 60's D = 128 loop get the
# rescale's FMULs off the loop's end, and what does that buy? split_softmax.patch (on the committed step 60, variant
# and twin alike; the fp16 D = 128 kernel of each form is the same from both, checked in SASS on the CPU machine):
#   s60: as committed;
#   nr:  FA_EXP_NO_RESCALE=1, the bound (call.sh: 1.047x-1.053x); timed only, never checked (its results are wrong);
#   sp1: FA_EXP_SPLIT_SOFTMAX=1, the softmax split in the source, row maxima and alpha before P V's wait, the
#        exponentials, sums and O's rescale side by side after it; ptxas hoists the exponentials back above the wait
#        and leaves the FMULs at the end (step60_split1.txt, 470 instructions): the control for the restructure;
#   sp2: FA_EXP_SPLIT_SOFTMAX=2, sp1 with key block n's exponentials waiting on O's column block n - 1 rescaled (its
#        row's value times 0 added to the exponent's base: exact for finite O), so the FMULs spread over the
#        first half of the segment after P V's wait (step60_split2.txt; 500 instructions, every exponential after
#        the wait);
#   sp4: FA_EXP_SPLIT_SOFTMAX=4, the first half of the key blocks free and each of the second half tied to two of O's
#        column blocks (step60_split4.txt; 502 instructions): 12 exponentials before the wait, the FMULs among the
#        rest, the last 119 from the end, FA3's shape (13 before its wait, the last FMUL 106 from its end);
#   sp5: FA_EXP_SPLIT_SOFTMAX=5, FlashAttention-4's conditional rescale at the FMUL block only: a row's running max
#        moves only where a tile raises it by more than 2^8, and the warp skips O's FMULs (one vote after P V's
#        wait, P packed before it) where none of its rows moved (step60_split5.txt: 421 instructions skipped, 485
#        taken). Unlike ../2026-12-01-lazy-rescale-hopper's, no branch inside the softmax.
# Predictions, written before the call (hot, paired rounds, s60 over each; > 1: that form faster):
#   sp1 0.99x-1.01x at every row; sp2 1.01x-1.04x at the D = 128 rows if the block at the loop's end is what costs
#   (less than nr: 30 FFMAs more, and no exponential before the wait), below 1.00x if the exponentials waiting for
#   P V cost more; sp4 1.02x-1.045x there (FMULs spread, exponentials before the wait); sp5 1.03x-1.05x at the
#   long D = 128 rows (the skip path nearly every tile after a row's first), 1.01x-1.04x at (16, 16, 1024, 128); the D = 64 control (4, 16, 4096, 64) 0.995x-1.005x for all three (its serial loop is untouched).
#   The causal D = 64 long rows take the counter's tile, whose overlapped loop leaves its 32 FMULs at the end too
#   (step60_d64.txt): nr 1.01x-1.04x there, sp1 and sp2 0.995x-1.005x (their forms are D = 128's only).
#   sp1, sp2, sp4 and sp5 pass the 376-case grid.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-03-d128-rescale-placement
git apply $E/split_softmax.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
F='"FA_EXP_SPLIT_SOFTMAX": 0'  # every build with both element types: the grid has bf16 cases
export EXP_CONFIGS="{\"s60\": [\"one_loop_causal_short_d64\", {$F}],
  \"sp1\": [\"one_loop_causal_short_d64\", {\"FA_EXP_SPLIT_SOFTMAX\": 1}],
  \"sp2\": [\"one_loop_causal_short_d64\", {\"FA_EXP_SPLIT_SOFTMAX\": 2}],
  \"sp4\": [\"one_loop_causal_short_d64\", {\"FA_EXP_SPLIT_SOFTMAX\": 4}],
  \"sp5\": [\"one_loop_causal_short_d64\", {\"FA_EXP_SPLIT_SOFTMAX\": 5}]}"
timeout 200 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|FAILED|built|BUILD" $OUT/check.txt | cut -c1-200
grep -qE "[1-9][0-9]* failed|BUILD FAILED" $OUT/check.txt && { echo "a check failed: no timing"; exit 1; }
export EXP_CONFIGS="{\"s60\": [\"one_loop_causal_short_d64\", {$F}],
  \"nr\": [\"one_loop_causal_short_d64\", {\"FA_EXP_NO_RESCALE\": 1}],
  \"sp1\": [\"one_loop_causal_short_d64\", {\"FA_EXP_SPLIT_SOFTMAX\": 1}],
  \"sp2\": [\"one_loop_causal_short_d64\", {\"FA_EXP_SPLIT_SOFTMAX\": 2}],
  \"sp4\": [\"one_loop_causal_short_d64\", {\"FA_EXP_SPLIT_SOFTMAX\": 4}],
  \"sp5\": [\"one_loop_causal_short_d64\", {\"FA_EXP_SPLIT_SOFTMAX\": 5}]}"
export EXP_SHAPES='["4,16,4096,128", "2,16,8192,128", "1,16,16384,128", "16,16,1024,128", "4,16,4096,128,causal",
  "1,16,16384,128,causal", "4,16,4096,64", "4,16,4096,64,causal", "2,16,8192,64,causal"]'
timeout ${TIME_END:-300} python $X/exp.py time 1.5 > $OUT/time.txt 2>&1
echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-300 $OUT/time.txt | grep -v built
