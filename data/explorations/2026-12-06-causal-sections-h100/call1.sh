# Device call 1 of data/explorations/2026-12-06-causal-sections-h100 (issue 46), from the repository root, carry
# [".whl", ".fa3"]. Step 69's one miss of targets 1-3 on the H100 is (4, 16, 4096, 128, causal) hot: 0.998x and
# 0.999x FA3 in two runs. Its schedule is step 65's rule (32 MB sections of K/V, the counter from 3 tiles a CTA in the
# last one), chosen on an H200 (../2026-12-04-causal-d128-sections-step64: 16-64 MB sections and the older rule all
# within 0.5 % of it at S = 4096 there). Does another section size, or the older rule, do better on an H100?
# Configurations (step 69's macros in kernels/include/fa/tile_queue.cuh; no patch): s69 as committed; m8k the older
# rule at S = 4096 (FA_QUEUE_FA3_SECTIONS_MIN_S = 8192: two fifths of the L2 and the static list there); s16t1,
# s24t1, s40t1: sections of 16, 24, 40 MB with the counter from one tile a CTA.
# Prediction, written before the call: every configuration within 0.997x-1.005x of s69 at (4, 16, 4096, 128, causal)
# (the H200's spread), none reaching FA3 by more than 0.3 %; m8k 0.98x-0.99x at (2, 16, 8192, 128, causal); the
# non-causal control 1.000x +- 0.002.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
V=counter_tile_from_2k_d64
export EXP_CONFIGS='{"s69": ["'$V'", {}], "m8k": ["'$V'", {"FA_QUEUE_FA3_SECTIONS_MIN_S": 8192}],
  "s16t1": ["'$V'", {"FA_QUEUE_FA3_SECTION_MB": 16, "FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA": 1}],
  "s24t1": ["'$V'", {"FA_QUEUE_FA3_SECTION_MB": 24, "FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA": 1}],
  "s40t1": ["'$V'", {"FA_QUEUE_FA3_SECTION_MB": 40, "FA_QUEUE_FA3_SECTIONS_TILES_PER_CTA": 1}]}'
timeout 240 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,128,causal", "8,16,4096,128,causal", "2,16,8192,128,causal", "4,16,4096,128"]'
timeout 150 python $X/exp.py time 3.0 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cat $OUT/time.txt | cut -c1-400
