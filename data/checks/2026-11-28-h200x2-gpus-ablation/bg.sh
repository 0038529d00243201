#!/bin/bash
# Issue 49's runs on one host of 2 GPUs, in the background (setsid) so that they outlive a call: a small
# GPUS=2 smoke of the shared stages, then make ablation's stages at the defaults with GPUS=1 REPLICATES=3,
# then the same with GPUS=2 REPLICATES=3, each from cold builds. Status lines go to /tmp/out/status.
SYNC=$1
cd /tmp/lab
source .whl/prelude.sh >/dev/null 2>&1; source .whl-tuning/prelude.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/lab:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0
say() { echo "$(date +%H:%M:%S) $*" >> /tmp/out/status; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > /tmp/out/gpu.txt
newest() { ls -t data/runs | head -1; }
export LAB_GIT_SHA=$(cat .scratch/sha)
say "smoke start sha $LAB_GIT_SHA"
T0=$(date +%s)
timeout 240 python -m lab.pipeline --no-report --gpus 2 --replicates 2 --variants tma --shapes "1,8,512,64;2,8,1024,64" \
  --modes hot --check quick --knockouts 0 --peers sdpa_flash --decode "" > /tmp/out/log_smoke.txt 2>&1
say "smoke rc=$? wall=$(( $(date +%s)-T0 )) run=$(newest)"; newest > /tmp/out/run_smoke
for G in 1 2; do
  if [ $G = 2 ] && [ -f "$SYNC/.scratch/refresh" ]; then  # a fix made after the smoke: the synced tree's lab/
    rsync -a --delete "$SYNC/lab/" /tmp/lab/lab/ && cp "$SYNC/.scratch/sha" .scratch/sha && export LAB_GIT_SHA=$(cat .scratch/sha)
    say "refreshed lab/ from $SYNC, sha $LAB_GIT_SHA"
  fi
  rm -rf build  # cold builds for both runs
  say "run GPUS=$G start"
  T0=$(date +%s)
  python -m lab.pipeline --no-report --gpus $G --replicates 3 > /tmp/out/log_gpus$G.txt 2>&1
  say "run GPUS=$G rc=$? wall=$(( $(date +%s)-T0 )) run=$(newest)"; newest > /tmp/out/run_gpus$G
done
say "all done"; touch /tmp/out/done
