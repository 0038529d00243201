# Issue 50: Falcon-7B's wide groups (71 query heads on one K/V head) on the TMA tile of 16 or 32 rows, several row
# blocks a (sequence, K/V head), instead of the row warps (tma_tile_for_wide_groups.patch and force_splits.patch, on
# the device copy only). Call 1's Nsight Compute has SDPA's cuDNN backend at batch 64 of 1024 tokens launching
# one kernel of 320 CTAs of 4 warps (5 blocks of 16 rows a sequence, no merge) in 16.4 us, where step 54's row
# warps take 13.5 us for 256 CTAs (4 chunks) and its merge 5.8 us.
# Expectation, written before the call: at batch 64 of 1024 tokens the 16-row TMA tile (t1: 320 CTAs, no split by
# the rule) takes 12-15 us hot, faster than the rule (16.7) and than cuDNN; the 32-row tile (t2) slower than t1
# (step 45's form: 21.5 us main kernel in ../2026-11-28-decode-row-warps); at batch 8 of 8192 tokens and the
# paged q4 call t1 within 0.95x-1.05x of the rule (both split), and the mixed batch of 32 about as the rule.
# About 150 s.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-02-decode-wide-groups
git apply $E/force_splits.patch && git apply $E/tma_tile_for_wide_groups.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
S=chunks_one_cta_an_sm
W=FA_DECODE_ROW_WARPS_ABOVE=1000
C="rule=$S t1=$S@$W@FA_DECODE_FORCE_RT=1 t2=$S@$W@FA_DECODE_FORCE_RT=2"
C="$C t1f2=$S@$W@FA_DECODE_FORCE_RT=1@FA_DECODE_FORCE_SPLITS=2 t2f1=$S@$W@FA_DECODE_FORCE_RT=2@FA_DECODE_FORCE_SPLITS=1"
T0=$(date +%s)
SWEEP_MODES=hot,cold timeout 240 python data/explorations/2026-12-02-decode-splits/sweep.py $OUT $C -- \
  64,71,1,64,1024,bf16 8,71,1,64,8192,bf16 32,71,1,64,4096,mixed,bf16 16,71,1,64,32768,q4,page64,bf16 \
  > $OUT/sweep.txt 2>&1
echo "sweep rc=$? $(( $(date +%s)-T0 )) s"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct
F=64,71,1,64,1024,bf16
timeout 60 ncu --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --print-units base \
  python $E/prof.py "t1=$S@$W@FA_DECODE_FORCE_RT=1" $F > $OUT/ncu_falcon64_t1.csv 2>&1
echo "ncu done $(( $(date +%s)-T0 )) s"
python data/explorations/2026-12-02-decode-splits/table.py $OUT/sweep.json rule > $OUT/table2.txt 2>&1
mv $OUT/sweep.json $OUT/sweep2.json; mv $OUT/sweep.txt $OUT/sweep2.txt
grep -E "^check|Error|Traceback" $OUT/sweep2.txt | tail -12
cut -c1-200 $OUT/table2.txt
