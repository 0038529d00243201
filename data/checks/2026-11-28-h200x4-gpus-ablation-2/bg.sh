#!/bin/bash
# Issue 49's wall-time runs again, after stop 61's levers (each shape's profile variants and peers as separate
# GPU tasks, the decode checks shared over the children, the decode steps built in the build stage, the
# flex_attention warm-up's compile threads shared), on one host of 4 GPUs in the background (setsid, so that
# they outlive a call): a small GPUS=4 smoke of the shared stages, then the whole of `make ablation` at the
# defaults (the stages and the report) with GPUS=4 REPLICATES=4, then with GPUS=1 REPLICATES=3, each from
# cold builds and with torch's inductor and Triton caches of its own. Status lines go to /tmp/out/status.
SYNC=$1
cd /tmp/lab
source .whl/prelude.sh >/dev/null 2>&1; source .whl-tuning/prelude.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/lab:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0
say() { echo "$(date +%H:%M:%S) $*" >> /tmp/out/status; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > /tmp/out/gpu.txt
nproc >> /tmp/out/gpu.txt
newest() { ls -t data/runs | head -1; }
cold_caches() {  # each run its own empty inductor and Triton caches (outside the tree, never cleared by rm -rf build)
  export TORCHINDUCTOR_CACHE_DIR=$(mktemp -d /tmp/inductor.XXXX) TRITON_CACHE_DIR=$(mktemp -d /tmp/triton.XXXX)
}
refresh() {  # a fix made after the smoke: the synced tree's lab/
  if [ -f "$SYNC/.scratch/refresh" ] && ! cmp -s "$SYNC/.scratch/refresh" .scratch/refreshed; then
    rsync -a --delete "$SYNC/lab/" /tmp/lab/lab/ && cp "$SYNC/.scratch/sha" .scratch/sha && cp "$SYNC/.scratch/refresh" .scratch/refreshed
    say "refreshed lab/ from $SYNC, sha $(cat .scratch/sha)"
  fi
  export LAB_GIT_SHA=$(cat .scratch/sha)
}
refresh
say "smoke start sha $LAB_GIT_SHA"
cold_caches
T0=$(date +%s)
timeout 300 python -m lab.pipeline --no-report --gpus 4 --replicates 4 --variants tma --shapes "1,8,512,64;2,8,1024,64" \
  --modes hot --check quick --knockouts 0 --peers sdpa_flash \
  --decode "8,32,8,128,8192;1,32,8,128,4096;16,32,8,128,2048,q4,page64;2,32,8,128,1024;4,32,8,128,2048" \
  > /tmp/out/log_smoke.txt 2>&1
say "smoke rc=$? wall=$(( $(date +%s)-T0 )) run=$(newest)"; newest > /tmp/out/run_smoke
for G in 4 1; do
  refresh
  R=$([ $G = 1 ] && echo 3 || echo $G)
  rm -rf build  # cold builds for both runs
  cold_caches
  say "run GPUS=$G REPLICATES=$R start"
  T0=$(date +%s)
  python -m lab.pipeline --gpus $G --replicates $R > /tmp/out/log_gpus$G.txt 2>&1
  say "run GPUS=$G rc=$? wall=$(( $(date +%s)-T0 )) run=$(newest)"; newest > /tmp/out/run_gpus$G
done
say "all done"; touch /tmp/out/done
