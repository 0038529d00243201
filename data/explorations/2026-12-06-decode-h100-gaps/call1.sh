# Device call 1 of data/explorations/2026-12-06-decode-h100-gaps (issue 50, targets 2 and 4), from the repository
# root on one H100, carry [".whl"]. About 5 minutes on a fresh machine. Two parts, both to $OUT/call1.tgz:
#  1. ../2026-12-06-decode-set-time/split.py: the decode profile's ncu process bare and under ncu over subsets of
#     its calls (target 4: where the profile's 25.7 s go on an H100).
#  2. ../2026-12-02-decode-splits/sweep.py: the decode end, l2_promotion_by_gpu, with FA_DECODE_SPLIT_WITHIN_PCT
#     (its chunk rule's "within N % of the best wave efficiency", 85 as committed) at 80, 92 and 99 beside the rule,
#     hot and cold, against SDPA's backends, at the three shapes target 2 misses on the H100 and one control.
# Expectation, written before the call (README.md says why):
#  - At (1, 32, 8, 128, 131072) (8 (sequence, K/V head) pairs on 132 SMs) the counts are 15 chunks (rule, 120
#    CTAs), 14 (p80, 112), 16 (p92, 128: one CTA on 128 of the 132 SMs) and 33 (p99, 264: two waves). p92 is
#    0.5-2 % faster than the rule hot and reaches cuDNN (the run: 0.9936x); p80 slower by about as much; p99 slower
#    by 2-6 % (step 47's 29 chunks were 5.5 % slower than 12-16 on an H200).
#  - At (8, 64, 8, 128, 131072) (64 pairs) the rule, p80 and p92 take 2 chunks and p99 33 (16 waves): p99 1-4 %
#    slower. (64, 32, 8, 128, 1024) (512 pairs, unsplit) and (8, 32, 8, 128, 8192) (64 pairs, 2 chunks) take the
#    same count under every setting: there the configurations differ by noise only (within +-0.5 % hot), the
#    sweep's own noise floor.
#  - split.py: the process's fixed cost (bare, both shapes) 8-15 s of the 25.7 s; the rest ncu's replays, about
#    0.3-0.5 s a call.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-06-decode-h100-gaps
mkdir -p /tmp/c1/split /tmp/c1/sweep
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > /tmp/c1/gpu.txt
OUT=/tmp/c1/split timeout 300 python data/explorations/2026-12-06-decode-set-time/split.py > /tmp/c1/split/log.txt 2>&1
echo "split rc=$?"
C="rule=l2_promotion_by_gpu"
for n in 80 92 99; do C="$C p$n=l2_promotion_by_gpu@FA_DECODE_SPLIT_WITHIN_PCT=$n"; done
SWEEP_MODES=hot,cold timeout 240 python data/explorations/2026-12-02-decode-splits/sweep.py /tmp/c1/sweep $C -- \
  1,32,8,128,131072,bf16 8,64,8,128,131072,bf16 64,32,8,128,1024,bf16 8,32,8,128,8192,bf16 \
  > /tmp/c1/sweep/sweep.txt 2>&1; echo "sweep rc=$?"
tar czf $OUT/call1.tgz -C /tmp c1
cat /tmp/c1/gpu.txt /tmp/c1/split/split.txt 2>/dev/null
grep -E "^check|bf16|Error|Traceback" /tmp/c1/sweep/sweep.txt | cut -c1-300 | tail -20
