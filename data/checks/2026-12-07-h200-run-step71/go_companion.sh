#!/bin/bash
# The next device call for issue 46 on the H200: step 71's sustained companion (the sustained mode alone at issue 46's
# 20 rows, TURNS turns a row (6 by default), 5 replicates, FA3 and cuDNN beside it), as
# ../2026-12-06-h100-sustained-step71 ran on an H100 with 10 turns (1,634 s of device time there with the start). 6
# turns should take about 1,050 s, an estimate: the H100's 1,511 s of timing scaled by 6/10, plus its start and its
# other stages (the interval is over the 5 replicates). A session's 1,800 s holds it after several short starts.
# TURNS=4 should take about 700 s by the same scaling (1,511 s x 4/10 + 75 s of other stages + the start).
# On any other GPU it names the GPU and stops.
#
# CHECKED names this folder (its GPU tests and sanitizers passed at 36dadea8). Before the call, here (the GPU machine's
# tree has no .git), this must print nothing:
#   git diff --name-only 36dadea8 HEAD -- kernels lab/kernels lab/measure/check.py lab/measure/sanitize.py \
#     tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py tests/ladder.py | grep -v sass_mix
# Then: git rev-parse HEAD > .scratch/sha_run; the call (the pruned tree, 45 MiB, travels whole with what it carries;
# lab/studies/landing/aside.sh out/back only where a tree grows past 64 MiB with it)
#   bash data/checks/2026-12-07-h200-run-step71/go_companion.sh   (carry .whl, .fa3, .scratch)
# and polls (STEP=older_queue_under_8_pairs WAIT=570 bash lab/studies/landing/poll.sh) until done.
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $name"
if ! echo "$name" | grep -q H200; then echo "not an H200: nothing run"; exit 0; fi
STEP=older_queue_under_8_pairs FRESH=1 WAIT=${WAIT:-560} CHECKED=data/checks/2026-12-07-h200-run-step71 \
RUN_ARGS="--variants older_queue_under_8_pairs --shapes large,long,models --modes sustained --sustained large,long,models --sustained-turns ${TURNS:-6} --replicates 5 --peers flash_attn3,sdpa_cudnn --check quick --profile 0 --knockouts 0 --decode=" \
  bash lab/studies/landing/poll.sh
