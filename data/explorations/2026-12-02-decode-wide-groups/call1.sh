# Issue 50: the decode end (step 54, chunks_one_cta_an_sm) with its key chunks forced to 1-8 (force_splits.patch, on
# the device copy only) at Falcon-7B's four set shapes (71 query heads on one K/V head: the row-warp kernel) and the
# three mixed-length batches, hot and cold; then Nsight Compute of the split and merge kernels at Falcon-7B's batch
# 64 (the rule's 4 chunks, 1, 2, and SDPA's cuDNN backend) and at Qwen2.5-7B's mixed batch (the rule's 2, 4).
# Expectation, written before the call:
# - Falcon-7B batch 64 of 1024 tokens (run 20261202T011948Z-9b1f978: 16.7 us hot against cuDNN's 15.0; the rule
#   takes 4 chunks, 256 CTAs of 256 keys): one chunk (64 CTAs of 1024 keys) drops the merge kernel (5.6 of 13.9 us
#   in ../2026-11-28-decode-row-warps call 2, 2 chunks) and is the fastest count, 13-15 us hot, at least cuDNN.
# - Falcon-7B batch 8 of 8192 tokens (the rule's 32 chunks): 1-8 chunks all slower than the rule (8 pairs).
# - The mixed batches (the rule: 2 chunks at 128 pairs, 1 at 256): 3-4 chunks 1.02x-1.06x faster than the rule at
#   Qwen2.5-7B's (32, 28, 4, 128, 4096) (its longest sequence's chunk is the tail), no count better than 1.01x at
#   the 256-pair batches.
# About 300 s.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-02-decode-wide-groups
git apply $E/force_splits.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
S=chunks_one_cta_an_sm
C="rule=$S"
for n in 1 2 3 4 6 8; do C="$C f$n=$S@FA_DECODE_FORCE_SPLITS=$n"; done
T0=$(date +%s)
SWEEP_MODES=hot,cold timeout 300 python data/explorations/2026-12-02-decode-splits/sweep.py $OUT $C -- 64,71,1,64,1024,bf16 8,71,1,64,8192,bf16 \
  32,71,1,64,4096,mixed,bf16 16,71,1,64,32768,q4,page64,bf16 32,28,4,128,4096,mixed,bf16 \
  32,32,8,128,4096,mixed,bf16 32,64,8,128,4096,mixed,bf16 > $OUT/sweep.txt 2>&1
echo "sweep rc=$? $(( $(date +%s)-T0 )) s"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct
prof() { timeout 60 ncu --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --print-units base \
  python $E/prof.py "$1" "$2" > "$OUT/ncu_$3.csv" 2>&1; }
F=64,71,1,64,1024,bf16
prof "rule=$S" $F falcon64_rule; prof "f1=$S@FA_DECODE_FORCE_SPLITS=1" $F falcon64_f1
prof "f2=$S@FA_DECODE_FORCE_SPLITS=2" $F falcon64_f2; prof sdpa:cudnn $F falcon64_cudnn
Q=32,28,4,128,4096,mixed,bf16
prof "rule=$S" $Q qwen_mixed_rule; prof "f4=$S@FA_DECODE_FORCE_SPLITS=4" $Q qwen_mixed_f4
echo "ncu done $(( $(date +%s)-T0 )) s"
python data/explorations/2026-12-02-decode-splits/table.py $OUT/sweep.json rule > $OUT/table.txt 2>&1
grep -E "^check|Error|Traceback" $OUT/sweep.txt | tail -12
cut -c1-60,62-200 $OUT/table.txt | cut -c1-260
