# Issue 50 target 2: step 47 (merge_side_by_side, the decode end) with its key chunks forced to 2-96
# (force_splits.patch, applied to the device copy) at the six set shapes where run 20261201T211513Z-59b3f77 has it
# behind the fastest SDPA backend (hot) and two where it is level or ahead. About 200 s.
# Expectation, written before the call: at (8, 28, 4, 128, 8192) (32 (sequence, K/V head) pairs) and at
# (1, 32, 8, 128, 131072) (8 pairs) some forced count beats the rule's by 3-8 %, enough to reach cuDNN; at the
# batch-64 shapes of 1024 tokens (512 / 256 pairs: the rule does not split) no count helps (the losses there are
# not the chunks); at Falcon-7B's batch 64 (71 rows a K/V head, row warps) 2-4 chunks help by up to 5 %.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-02-decode-splits
git apply $E/force_splits.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
C="rule=merge_side_by_side"
for n in 2 4 8 12 16 24 32 48 64 96; do C="$C s$n=merge_side_by_side@FA_DECODE_FORCE_SPLITS=$n"; done
timeout 480 python $E/sweep.py $OUT $C -- 8,28,4,128,8192,bf16 64,71,1,64,1024,bf16 1,32,8,128,131072,bf16 \
  8,64,8,128,8192,bf16 8,32,8,128,8192,bf16 64,64,8,128,1024,bf16 64,28,4,128,1024,bf16 8,71,1,64,8192,bf16 \
  > $OUT/sweep.txt 2>&1; echo "rc=$?"
grep -E "^check|bf16|Error|Traceback" $OUT/sweep.txt | cut -c1-400 | tail -30
