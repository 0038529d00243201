# Issue 50: step 55 (wide_groups_in_row_blocks) lost on two of its four held-out shapes in its landing call
# (data/checks/2026-12-02-h200-run-step55/before_run/sweep_table.txt, hot): (32, 71, 1, 64, 1024) 0.835x over step 54
# (row blocks, 3 chunks: 480 CTAs of 342 keys) and (64, 71, 1, 64, 1024, q2) 0.913x (9 row blocks x 64 = 576
# CTAs, 1 chunk), where it won at (64, 71, 1, 64, 1024) (320 CTAs, 1 chunk) and (16, 71, 1, 64, 2048) (240 CTAs).
# This call forces step 55's choice (force.patch, on the device copy only): rw = the row warps (step 54's plan),
# rbN = the 16-row tile's row blocks with N chunks, s55 = the rule as it is.
# Hypothesis, written before the call: the row blocks lose where their CTAs outnumber the 16-row tile's resident
# wave (396 at D = 64: 3 CTAs an SM x 132 SMs), since a second partial wave of short CTAs costs as much as the
# first. Predicted: at (32, 71, 1, 64, 1024) rb1 (160 CTAs) and rb2 (320) faster than rb3 (480), the faster of them
# within 0.95x-1.10x of rw (12.5 us hot); at (64, 71, 1, 64, 1024, q2) every rbN slower than rw (576 CTAs or more);
# at the mixed (32, 71, 1, 64, 4096) rb2 (320 CTAs) at least as fast as rb3 (480, the rule's); at (64, 71, 1, 64,
# 1024) rb1 the fastest. Then a rule "the most chunks whose row-block CTAs fit one resident wave, row warps where
# even one chunk does not fit" is worth drafting. About 150 s.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-02-decode-row-block-chunks
git apply $E/force.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
S=wide_groups_in_row_blocks
F=FA_DECODE_FORCE_ROW_BLOCKS
C="s55=$S rw=$S@$F=0"
for n in 1 2 3 4; do C="$C rb$n=$S@$F=1@FA_DECODE_FORCE_SPLITS=$n"; done
T0=$(date +%s)
SWEEP_MODES=hot,cold timeout 280 python data/explorations/2026-12-02-decode-splits/sweep.py $OUT $C -- \
  32,71,1,64,1024,bf16 64,71,1,64,1024,q2,bf16 32,71,1,64,4096,mixed,bf16 64,71,1,64,1024,bf16 \
  16,71,1,64,1024,bf16 32,71,1,64,2048,bf16 16,71,1,64,2048,bf16 32,71,1,64,1024,q2,bf16 4,71,1,64,4096,bf16 \
  > $OUT/sweep.txt 2>&1
echo "sweep rc=$? $(( $(date +%s)-T0 )) s"
python data/explorations/2026-12-02-decode-splits/table.py $OUT/sweep.json rw > $OUT/table.txt 2>&1
grep -E "^check|Error|Traceback" $OUT/sweep.txt | tail -12
cut -c1-230 $OUT/table.txt
