# Issue 50 target 2, call 2: call 1 found the streaming shapes fastest at about one CTA an SM (128 CTAs: 2 chunks at
# 64 pairs, 4 at 32, 12-16 at 8), where step 42's rule, counting a wave as SMs x CTAs an SM (2 here), splits twice
# as fine. wave_per_sm.patch (device copy only) lets the wave count FA_DECODE_TMA_WAVE_PER_SM CTAs an SM for the
# TMA tile's calls (rows <= 32) and FA_DECODE_ROW_WAVE_PER_SM for the row warps' (Falcon-7B's 71 rows). Every set
# shape, hot and cold, against step 47 as it is and SDPA's backends. About 150 s.
# Expectation, written before the call: w1 (the TMA tile's wave = SMs) picks 2 chunks at (8, 32|64, 8, 128, 8192),
# 4 at Qwen2.5-7B's (8, 28, 4, 128, 8192), 15 at batch 1 of 128k: 1.02x-1.10x over step 47 there, hot and cold,
# and ahead of the fastest SDPA backend hot; the batch-64 shapes of 1024 tokens unchanged (no split either way);
# the paged q4 shapes and Qwen's mixed batch split less (1-2 chunks): 0.97x-1.03x. w1r1 (the row warps too) loses at
# Falcon-7B's (8, 71, 1, 64, 8192) (call 1: 16 chunks 18.0 us against the rule's 32, 17.1).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1 SWEEP_MODES=hot,cold
E=data/explorations/2026-12-02-decode-splits
git apply $E/wave_per_sm.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
S=$(python -c "from lab.studies.shapes import decode_shapes; print(' '.join(s.spec for s in decode_shapes()))")
timeout 400 python $E/sweep.py $OUT rule=merge_side_by_side w1=merge_side_by_side@FA_DECODE_TMA_WAVE_PER_SM=1 \
  w1r1=merge_side_by_side@FA_DECODE_TMA_WAVE_PER_SM=1@FA_DECODE_ROW_WAVE_PER_SM=1 -- $S > $OUT/sweep.txt 2>&1
echo "rc=$?"
grep -E "^check|bf16|Error|Traceback" $OUT/sweep.txt | cut -c1-300 | tail -40
