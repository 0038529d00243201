#!/bin/bash
# MIN_BLOCKS A/B at the two long models shapes whose intervals missed issue 22's target 4 (prepared at
# stop 35, not run yet): one-shape-set runs of step 34 and the peers, alternating MIN_BLOCKS 6 and 2,
# then step 34 against cuDNN in each. One H100 call (about 8 min); carry .whl.
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv | tee $OUT/gpu.txt
S="1,64,8192,128,causal,kv8,bf16;1,71,8192,64,causal,kv1,bf16"
NEW=()
for B in 6 2 6 2; do
  before=$(ls data/runs | tail -1)
  timeout -k 10 130 python -m lab.pipeline --no-report --shapes "$S" --variants warp_release_d64 --knockouts 0 \
    --profile 0 --check none --min-blocks $B > $OUT/log_${B}_${SECONDS}.txt 2>&1
  echo "MIN_BLOCKS=$B rc=$? at $((SECONDS-T0)) s"
  after=$(ls data/runs | tail -1); [ "$after" != "$before" ] && NEW+=("$after")
done
python data/explorations/2026-11-26-min-blocks/ab.py "${NEW[@]}" | tee $OUT/ab.txt
tar czf $OUT/runs.tgz -C data/runs "${NEW[@]}"; echo "done at $((SECONDS-T0)) s"
