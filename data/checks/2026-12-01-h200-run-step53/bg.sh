#!/bin/bash
# Step 53's GPU check (before_run/call.sh's commands, its logs as log_*.txt) and then, only if the GPU tests and the
# sanitizers pass, one recorded run of `make ablation`'s measuring stages at the defaults on this one-GPU machine, in
# the background (setsid, so that it outlives a call); poll.sh's later calls wait and bring back the run folder.
#
# Predictions for the timing, written before the call (step 53's speedup over step 52, hot, paired rounds; the
# `s52/s53` column of log_time.txt is step 52's time over step 53's, so the speedup is that ratio itself):
#   read from (data/explorations/2026-11-29-d64-stages): (4, 16, 4096, 64), (2, 16, 8192, 64), (1, 12, 8192, causal,
#     bf16), (1, 71, 8192, causal, kv1, bf16), (8, 16, 4096, causal): 1.01x-1.025x each;
#   held out, on the static three-warpgroup tile: (8, 16, 4096, 64), (1, 16, 16384, 64), (16, 16, 2048, 64),
#     (4, 32, 4096, 64, kv8, bf16), (16, 16, 4096, 64, causal): 1.005x-1.03x each;
#   no call on it, 0.99x-1.01x: (4, 16, 4096, 64, causal) and (1, 16, 16384, 64, causal) (the counter's tile),
#     (4, 16, 512, 64), (4, 16, 4096, 128).
SYNC=$1
cd /tmp/lab
source .whl/prelude.sh >/dev/null 2>&1; source .whl-tuning/prelude.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/lab:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0 LAB_GIT_SHA=$(cat .scratch/sha)
say() { echo "$(date +%H:%M:%S) $*" >> /tmp/out/status; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > /tmp/out/gpu.txt
newest() { ls -t data/runs | head -1; }
T0=$(date +%s)
timeout 240 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k "two_stages_three_wgs_d64" > /tmp/out/log_gpu_tests.txt 2>&1; rc_t=$?
say "gpu tests rc=$rc_t $(( $(date +%s)-T0 )) s: $(tail -1 /tmp/out/log_gpu_tests.txt | cut -c1-120)"
timeout 120 python -m lab sanitize --variants two_stages_three_wgs_d64 --tools memcheck,racecheck,synccheck \
  --out /tmp/out/sanitize.json > /tmp/out/log_sanitize.txt 2>&1; rc_s=$?
say "sanitize rc=$rc_s $(( $(date +%s)-T0 )) s"
export EXP_CONFIGS='{"s52": ["three_wgs_queue_causal_d64", {}], "s53": ["two_stages_three_wgs_d64", {}]}'
export EXP_SHAPES='["4,16,4096,64", "2,16,8192,64", "1,12,8192,64,causal,bf16", "1,71,8192,64,causal,kv1,bf16",
  "8,16,4096,64,causal", "8,16,4096,64", "1,16,16384,64", "16,16,2048,64", "4,32,4096,64,kv8,bf16", "16,16,4096,64,causal",
  "4,16,4096,64,causal", "1,16,16384,64,causal", "4,16,512,64", "4,16,4096,128"]'
OUT=/tmp/out timeout 150 python data/explorations/2026-11-28-kv-apart-d128/exp.py time 0.5 > /tmp/out/log_time.txt 2>&1
say "time rc=$? $(( $(date +%s)-T0 )) s"
if [ $rc_t -ne 0 ] || [ $rc_s -ne 0 ]; then say "a check failed: no recorded run"; say "all done"; touch /tmp/out/done; exit 0; fi
rm -rf data/runs/*  # the checks' own folders, if any: the run folder below is the only one
say "run start sha $LAB_GIT_SHA"
T1=$(date +%s)
python -m lab.pipeline --no-report > /tmp/out/log_run.txt 2>&1
say "run rc=$? wall=$(( $(date +%s)-T1 )) run=$(newest)"; newest > /tmp/out/run_main
say "all done"; touch /tmp/out/done
