# Issue 50, call 2 of this exploration (call1.sh's force.patch, on the device copy only). Call 1 found, at seven
# uniform Falcon-7B shapes, the row blocks fastest (or within 1 % of it) at the most chunks whose CTAs fit the
# 16-row tile's resident wave (396: 3 CTAs an SM x 132 SMs), and the row warps fastest where one chunk does not
# fit; but at the mixed batch (32, 71, 1, 64, 4096) 3 chunks (480 CTAs, 20.7 us) beat 2 (320, 23.7): a mixed
# batch's short sequences leave CTAs idle, so its busy CTAs fit one wave at 3.
# Predictions, written before the call: uniform (32, 71, 1, 64, 4096) as (32, 71, 1, 64, 2048) in call 1, rb2
# faster than rb3 (one round of 2,048 keys against two of 1,366); (4, 71, 1, 64, 4096) faster with more chunks up to
# rb16 (320 CTAs of 256 keys), rb16 within 0.97x-1.10x of rw; (8, 71, 1, 64, 2048) rb8 (320 CTAs) the fastest row
# blocks; the mixed (16, 71, 1, 64, 4096) and (32, 71, 1, 64, 8192) fastest at more chunks than fit a wave
# (their short sequences' CTAs end early); the set shape (8, 71, 1, 64, 8192), 40 row blocks, which the wave rule
# would give 9 chunks of 960 keys (360 CTAs) where step 55 keeps the row warps: rb9 within 0.95x-1.10x of rw
# (call 1's nearest case, (16, 71, 1, 64, 2048) at 4 chunks, 320 CTAs of 512 keys, was 1.250x). About 150 s.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-02-decode-row-block-chunks
git apply $E/force.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
S=wide_groups_in_row_blocks
F=FA_DECODE_FORCE_ROW_BLOCKS
C="s55=$S rw=$S@$F=0"
for n in 2 3 4 6 8 9 16; do C="$C rb$n=$S@$F=1@FA_DECODE_FORCE_SPLITS=$n"; done
T0=$(date +%s)
SWEEP_MODES=hot,cold timeout 200 python data/explorations/2026-12-02-decode-splits/sweep.py $OUT $C -- \
  32,71,1,64,4096,bf16 4,71,1,64,4096,bf16 8,71,1,64,2048,bf16 16,71,1,64,4096,mixed,bf16 \
  32,71,1,64,8192,mixed,bf16 8,71,1,64,8192,bf16 > $OUT/sweep.txt 2>&1
echo "sweep rc=$? $(( $(date +%s)-T0 )) s"
python data/explorations/2026-12-02-decode-splits/table.py $OUT/sweep.json rw > $OUT/table.txt 2>&1
grep -E "^check|Error|Traceback" $OUT/sweep.txt | tail -12
cut -c1-300 $OUT/table.txt
