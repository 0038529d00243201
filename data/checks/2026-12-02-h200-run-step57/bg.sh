#!/bin/bash
# Steps 56 and 57 landed by one recorded run (the next session's first call; written 2026-12-02 after the checks in
# ../call1, which passed on these kernels: no kernel source changed since 80559ac). Before the call, from the
# repository root with the tree committed and clean:
#   git rev-parse HEAD > .scratch/sha_run
#   cp data/checks/2026-12-02-h200-step56-57-checks/run/land.sh .scratch/bg.sh
#   cp data/checks/2026-12-02-step54-decode-draft/run/poll.sh .scratch/
#   mv data/runs/* /tmp/oldruns/   # so that the tree with .whl, .whl-tuning and .fa3 fits 64 MiB
#   (run, carry .whl .whl-tuning .fa3 .scratch) WAIT=560 bash .scratch/poll.sh, again with WAIT=570 until "all done"
# What it runs: `make ablation`'s measuring stages at the defaults (python -m lab.pipeline --no-report; its own
# correctness stage checks every decode step on the decode grid, now with the wide mixed batch that found the
# launcher bug), at the committed HEAD. About 930 s of run and 110 s of the machine's start.
# What the run is expected to show (from ../call1, one H200, not a prediction made anew): step 56 over 55 about
# 0.87x at (32, 71, 1, 64, 4096, mixed), 0.94x at (8, 71, 1, 64, 8192), 1.29x at the set's new (32, 71, 1, 64,
# 1024), 1.00x elsewhere; step 57 over 56 1.00x everywhere.
cd /tmp/lab
source .whl/prelude.sh >/dev/null 2>&1; source .whl-tuning/prelude.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/lab:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0 LAB_GIT_SHA=$(cat .scratch/sha_run)
say() { echo "$(date +%H:%M:%S) $*" >> /tmp/out/status; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > /tmp/out/gpu.txt
newest() { ls -t data/runs | head -1; }
rm -rf data/runs/*  # the run folder below is the only one
say "run start sha $LAB_GIT_SHA"
T1=$(date +%s)
python -m lab.pipeline --no-report > /tmp/out/log_run.txt 2>&1
say "run rc=$? wall=$(( $(date +%s)-T1 )) run=$(newest)"; newest > /tmp/out/run_main
say "all done"; touch /tmp/out/done
