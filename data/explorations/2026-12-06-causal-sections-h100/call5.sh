# Device call 5 of data/explorations/2026-12-06-causal-sections-h100 (issue 46), from the repository root, carry
# [".whl", ".fa3"]; the patch applied on the device's copy first (`git apply $C/older_under_pairs.patch`).
# The rule read from calls 3-4 (by_size.txt), as a define on step 69 (FA_QUEUE_OLDER_UNDER_PAIRS = 8, "r8"): at
# 4096-8191 keys a causal D = 128 call keeps the older queue (two fifths of the L2, the counter from 4 tiles a CTA)
# where that queue takes the counter or walks at most 8 static heavy-light pairs a CTA, and takes FlashAttention-3's
# 32 MB sections (step 65) only where the older queue would walk more. rule_choice.cu prints the choice on the CPU.
# Checked on the 399-case grid, then timed hot against step 69 and m8k at the 17 rows of calls 3-4 and three controls.
# Prediction (written before the call): on an H100 r8 over s69 as m8k over s69 where r8 keeps the older queue
# (1.008-1.034x non-grouped at 1-4 x 16 heads, 1.014-1.020x at the four grouped rows of 32-96 MB) and 1.000x +- 0.002
# elsewhere ((5-16, 16), (4, 32), (8, 32, kv8), the S = 6144 and 8192 rows, the non-causal control); on an H200 no
# prediction past the rows an earlier H200 call measured ((4, 16, 4096) level, (8, 16, 4096) 1.000x under r8).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
V=counter_tile_from_2k_d64
export EXP_CONFIGS='{"r8": ["'$V'", {"FA_QUEUE_OLDER_UNDER_PAIRS": 8}]}'
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_CONFIGS='{"s69": ["'$V'", {}], "r8": ["'$V'", {"FA_QUEUE_OLDER_UNDER_PAIRS": 8}],
  "m8k": ["'$V'", {"FA_QUEUE_FA3_SECTIONS_MIN_S": 8192}]}'
export EXP_SHAPES='["1,16,4096,128,causal", "2,16,4096,128,causal", "3,16,4096,128,causal", "4,16,4096,128,causal",
  "5,16,4096,128,causal", "6,16,4096,128,causal", "8,16,4096,128,causal", "16,16,4096,128,causal",
  "4,32,4096,128,causal", "4,16,4096,128,causal,bf16", "2,32,4096,128,causal,kv8,bf16", "2,64,4096,128,causal,kv8,bf16",
  "4,32,4096,128,causal,kv8,bf16", "6,32,4096,128,causal,kv8,bf16", "8,32,4096,128,causal,kv8,bf16",
  "2,16,6144,128,causal", "4,16,6144,128,causal", "2,16,8192,128,causal", "1,16,16384,128,causal", "4,16,4096,128"]'
timeout 300 python $X/exp.py time 2.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
