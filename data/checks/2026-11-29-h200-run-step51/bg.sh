#!/bin/bash
# One recorded run of `make ablation`'s measuring stages at the defaults on this one-GPU machine, in the
# background (setsid, so that it outlives a call); poll.sh's later calls wait and bring back the run folder.
SYNC=$1
cd /tmp/lab
source .whl/prelude.sh >/dev/null 2>&1; source .whl-tuning/prelude.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/lab:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0 LAB_GIT_SHA=$(cat .scratch/sha)
say() { echo "$(date +%H:%M:%S) $*" >> /tmp/out/status; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > /tmp/out/gpu.txt
newest() { ls -t data/runs | head -1; }
say "run start sha $LAB_GIT_SHA"
T0=$(date +%s)
python -m lab.pipeline --no-report > /tmp/out/log_run.txt 2>&1
say "run rc=$? wall=$(( $(date +%s)-T0 )) run=$(newest)"; newest > /tmp/out/run_main
say "all done"; touch /tmp/out/done
