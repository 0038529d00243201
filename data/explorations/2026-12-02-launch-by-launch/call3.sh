# Issue 46, call 3: where the counter's merged tail pays. Call 2 (same session): mt (the remainder of the heads
# merged into the last full L2 section, the counter from 3 tiles a CTA) 1.011x at the three causal D = 128 shapes
# of S >= 4096 and 1.008x at (1, 16, 16384, 128), its launch's idle SMs 3.4 % of the elapsed cycles against 5.0 %
# (Nsight Compute), but 0.977x at (16, 16, 1024, 128, causal), where it takes the counter over heads of 8 query
# tiles. mt16: mt, the counter only where a head has at least 16 query tiles (queue_sections.patch's
# FA_EXP_QUEUE_MIN_M_BLOCKS; the grouped models rows of S = 2048, 16 tiles, take the counter already). Also the
# causal D = 64 shapes whose launches mt may move, and the S = 512 rows (issue 46's target 4).
# Predictions, written before the call (hot, paired rounds, over s53): mt16 0.99x-1.01x at (16, 16, 1024, 128,
# causal) (the static list again), mt there 0.97x-0.985x as in call 2; both 1.005x-1.02x at (4, 16, 4096, 128,
# causal) and (1, 16, 16384, 128, causal) (call 2's 1.011x); at (8, 16, 2048, 128, causal) (16 tiles a head) both
# 0.99x-1.02x, not known which side; at the causal D = 64 shapes (2, 16, 8192), (1, 16, 16384), GPT-2's and
# Falcon-7B's (1, 12 | 71, 8192) 0.99x-1.02x; at the S = 512 rows 0.99x-1.01x (too few tiles for the counter).
# Outputs bit-equal to s53's at every shape, the grid passed by all three.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
E=data/explorations/2026-12-02-launch-by-launch
git apply $E/queue_sections.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s53": ["two_stages_three_wgs_d64", {}],
  "mt": ["two_stages_three_wgs_d64", {"FA_EXP_QUEUE_MERGE_TAIL": 1, "FA_EXP_QUEUE_TILES_PER_CTA": 3}],
  "mt16": ["two_stages_three_wgs_d64", {"FA_EXP_QUEUE_MERGE_TAIL": 1, "FA_EXP_QUEUE_TILES_PER_CTA": 3,
           "FA_EXP_QUEUE_MIN_M_BLOCKS": 16}]}'
export EXP_SHAPES='["16,16,1024,128,causal", "8,16,2048,128,causal", "4,16,4096,128,causal", "1,16,16384,128,causal",
  "2,16,8192,64,causal", "1,16,16384,64,causal", "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16",
  "4,16,512,64,causal", "8,16,512,64"]'
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|FAILED|built|BUILD" $OUT/check.txt | cut -c1-200 | head -12
grep -qE "[1-9][0-9]* failed" $OUT/check.txt && { echo "a check failed: no timing"; exit 1; }
timeout 60 python $E/same_out.py > $OUT/same_out.txt 2>&1; echo "same_out rc=$? $(( $(date +%s)-T0 )) s"
grep -v "^built" $OUT/same_out.txt | cut -c1-160
grep -q "every output equal" $OUT/same_out.txt || { echo "outputs differ: no timing"; exit 1; }
timeout $(( 250 - ($(date +%s)-T0) )) python $X/exp.py time 1.2 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-330 $OUT/time.txt | grep -v built
