# Device call 1 of data/checks/2026-12-04-step65-fa3-sections-causal-d128-draft (issue 46), from the repository root,
# carry [".whl", ".fa3"]. PREPARED 2026-12-04 (stop 87, CPU only), NOT YET RUN. Applies step65-landing.patch in the
# device's copy where the tree lacks step 65; checks step 65 on the grid (its two new cases take its counter), times it
# hot over step 64 in paired rounds (../../explorations/2026-11-28-kv-apart-d128/exp.py) at the rows the exploration
# timed, and captures step 64 and step 65 beside FA3 under Nsight Compute at two rows (the exploration's call 1
# had no time left for it).
# Predictions, written before the call (the exploration's calls 1-2 ran the same rule as defines, 0.005 apart on one
# machine):
# - step 65 passes the grid;
# - over step 64: (2, 16, 8192, 128, causal) 1.012x-1.022x, (1, 16, 16384, 128, causal) 1.014x-1.024x,
#   (8, 16, 4096, 128, causal) 1.005x-1.016x, (1, 16, 8192, 128, causal) 1.000x-1.010x, (4, 16, 4096, 128, causal)
#   0.995x-1.006x, the grouped S = 8192 models rows 0.998x-1.003x, (16, 16, 1024, 128, causal) and
#   (4, 16, 4096, 128) 1.000x within 0.003;
# - Nsight Compute: step 64's busiest SM over its mean 1.015x-1.025x FA3's at (1, 16, 16384, 128, causal) and
#   (4, 16, 4096, 128, causal); step 65's within 1.005x of FA3's at both; the loop (mean active cycles an SM)
#   1.00x-1.02x FA3's at both, for both steps: at (4, 16, 4096, 128, causal) the 2 % FA3 keeps over step 65 is the
#   loop's or the counter's, not the balance's.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
L=data/explorations/2026-12-02-launch-by-launch
C=data/checks/2026-12-04-step65-fa3-sections-causal-d128-draft
[ -f kernels/variants/65_fa3_sections_causal_d128.cu ] || git apply $C/step65-landing.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s64": ["mirrored_second_tile", {}], "s65": ["fa3_sections_causal_d128", {}]}'
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128,causal", "2,16,8192,128,causal", "1,16,16384,128,causal", "1,16,8192,128,causal",
  "8,16,4096,128,causal", "16,16,1024,128,causal", "1,32,8192,128,causal,kv8,bf16", "1,64,8192,128,causal,kv8,bf16",
  "1,28,8192,128,causal,kv4,bf16", "4,16,4096,128"]'
timeout 150 python $X/exp.py time 1.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,smsp__inst_executed.sum
for step in mirrored_second_tile fa3_sections_causal_d128; do
  mkdir -p /tmp/$step
  for shape in 4,16,4096,128,causal 1,16,16384,128,causal; do
    timeout 100 $NCU --clock-control none --nvtx --nvtx-include profile/ --metrics $M --csv --page raw \
      --print-units base python $L/prof_pair.py $step flash_attn3 $shape > /tmp/$step/ncu_${shape//,/_}.csv 2>&1
    echo "ncu $step $shape rc=$? $(( $(date +%s)-T0 )) s"; done
  python $L/compare.py /tmp/$step/ncu_*.csv > $OUT/compare_$step.txt 2>&1
  python data/explorations/2026-12-04-launch-by-launch-step62/split.py $OUT/compare_$step.txt > $OUT/split_$step.txt 2>&1
done
python $X/exp.py summary $OUT/time.txt
echo "== split (step 64, then step 65; 'schedule' is the busiest SM over the mean, over FA3's)"
cat $OUT/split_mirrored_second_tile.txt $OUT/split_fa3_sections_causal_d128.txt
