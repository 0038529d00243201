# Issue 50 target 1 on the H200: does the mixed batches' per-byte loss come from their longest sequences' chunks? The
# decode end (persistent_decode_ctas, step 72) with FA_DECODE_FORCE_SPLITS (force_splits.patch, device copy only) at 4
# and 8 chunks beside the rule's, checked on the decode grid, then timed hot and cold with SDPA's backends
# (../2026-12-02-decode-splits/sweep.py). About 150 s on an H200 (the sweep of 2026-12-02 took 120-150 s).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1 SWEEP_MODES=hot,cold
E=data/explorations/2026-12-07-decode-mixed-chunks
git apply $E/force_splits.patch 2>/dev/null || patch -p1 < $E/force_splits.patch || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
S="32,28,4,128,4096,mixed,bf16 32,32,8,128,4096,mixed,bf16 32,64,8,128,4096,mixed,bf16 8,28,4,128,8192,bf16 8,32,8,128,8192,bf16 64,28,4,128,1024,bf16"
timeout 400 python data/explorations/2026-12-02-decode-splits/sweep.py $OUT rule=persistent_decode_ctas \
  c4=persistent_decode_ctas@FA_DECODE_FORCE_SPLITS=4 c8=persistent_decode_ctas@FA_DECODE_FORCE_SPLITS=8 \
  -- $S > $OUT/sweep.txt 2>&1
echo "rc=$?"
grep -E "^check|bf16|Error|Traceback" $OUT/sweep.txt | cut -c1-300 | tail -30
