# Device call 2 for step 63, from the repository root, carry [".whl", ".fa3"]. PREPARED 2026-12-04 after call 1.
# Call 1 refuted the draft at the count's edges: (1, 12, 4096, 64, causal) (264 tiles, 2 an SM) 0.768x of step 62 and
# (1, 11, 4096, 64, causal) (242, the rule not taken) 0.682x: the draft compiled step 51's static tile without causal
# paths, so calls under the count lost it too, and at 2 tiles a CTA the counter hands the second round's heaviest
# tile to the CTA that finished the first round's lightest (the heavy-light pairing undone).
# The fix (committed before this call): step 63's rule first, step 51's and step 52's after it, as in step 62, and
# step 51's tile keeps its causal paths. Here: the count swept, FA_TILE_COUNTER_TILE_CAUSAL_TILES_PER_SM_D64 = 2 and
# 3 (the rule's count and the counter's tiles a CTA), against step 62, from 2.0 to 3.9 tiles an SM, at S = 4096
# (22 tiles a head, one L2 section) and S = 8192 (43 a head), and the grid on both.
# Predictions, written before the call:
# - both pass the grid;
# - c2: (1, 12, 4096) 0.75x-0.80x again (call 1), (1, 11, 4096) 1.000x within 0.005 (step 62's tiles again);
#   the counter loses under about 2.5 tiles an SM and wins above 3: (1, 14, 4096) and (1, 7, 8192) 0.85x-1.00x,
#   (1, 20, 4096), (1, 23, 4096), (1, 10, 8192) 1.03x-1.12x, GPT-2 and Falcon-7B as call 1 (1.04x-1.08x);
# - c3: 1.000x within 0.005 under 3 tiles an SM (step 62's tiles), as c2 from 3 on.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s62": ["rescale_under_s", {}],
  "c2": ["counter_tile_causal_d64", {"FA_TILE_COUNTER_TILE_CAUSAL_TILES_PER_SM_D64": 2}],
  "c3": ["counter_tile_causal_d64", {"FA_TILE_COUNTER_TILE_CAUSAL_TILES_PER_SM_D64": 3}]}'
timeout 150 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["1,12,4096,64,causal", "1,14,4096,64,causal", "1,16,4096,64,causal", "1,18,4096,64,causal",
  "1,20,4096,64,causal", "1,23,4096,64,causal", "1,7,8192,64,causal", "1,8,8192,64,causal", "1,9,8192,64,causal",
  "1,10,8192,64,causal", "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16", "1,11,4096,64,causal",
  "4,16,4096,64,causal"]'
timeout 200 python $X/exp.py time 1.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
