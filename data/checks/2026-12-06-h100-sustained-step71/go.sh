#!/bin/bash
# First call of this session's device work: an H200 lands steps 70-71 (the run issue 46 and 50 lack on that GPU);
# an H100 runs step 71's sustained companion instead.
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $name"
export STEP=older_queue_under_8_pairs FRESH=1 WAIT=${WAIT:-560}
if echo "$name" | grep -q H200; then
  RUN_ARGS="--sustained large,long,models" bash lab/studies/landing/poll.sh
else
  CHECKED=data/checks/2026-12-06-h100-run-step71 \
  RUN_ARGS="--variants older_queue_under_8_pairs --shapes large,long,models --modes sustained --sustained large,long,models --sustained-turns 10 --replicates 5 --peers flash_attn3,sdpa_cudnn --check quick --profile 0 --knockouts 0 --decode=" \
  bash lab/studies/landing/poll.sh
fi
