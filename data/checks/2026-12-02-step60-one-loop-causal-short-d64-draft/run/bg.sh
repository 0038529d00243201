#!/bin/bash
# Step 60's landing call (written 2026-12-02 for the next session): with step60.patch applied and committed (HEAD
# clean), its GPU tests and compute-sanitizer on the committed sources (the draft's call/ checked them before their
# comments were last edited: the SASS is the same, the sources are not byte for byte), step 59 against step 60 at the
# shapes of ../call.sh, then, only if the tests and the sanitizers pass, one recorded run of `make ablation`'s measuring
# stages at the defaults, in the background (setsid, so that it outlives a call);
# data/checks/2026-12-02-step54-decode-draft/run/poll.sh's later calls wait and bring back the run folder. Before the
# first call, from the repository root:
#   git apply --index data/checks/2026-12-02-step60-one-loop-causal-short-d64-draft/step60.patch   # then the index
#   entry's steps = [59, 60], make docs, the CPU suite, commit
#   git rev-parse HEAD > .scratch/sha_run
#   cp data/checks/2026-12-02-step60-one-loop-causal-short-d64-draft/run/bg.sh .scratch/bg.sh
#   cp data/checks/2026-12-02-step54-decode-draft/run/poll.sh .scratch/
#   mv data/runs/* /tmp/oldruns/   # so that the tree with .whl, .whl-tuning and .fa3 fits 64 MiB; also the three
#   largest explorations (2026-11-26-models-set-timing-ab, 2026-11-23-softmax-issue, 2026-11-26-models-set-cost)
#   (run, carry .whl .whl-tuning .fa3 .scratch) WAIT=560 bash .scratch/poll.sh, again with WAIT=570 until "all done"
# About 1,200 s of calls and 100 s of the machine's start. Predictions for the timing, written before the call: as
# ../call.sh's header (the same shapes).
cd /tmp/lab
source .whl/prelude.sh >/dev/null 2>&1; source .whl-tuning/prelude.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/lab:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0 LAB_GIT_SHA=$(cat .scratch/sha_run)
say() { echo "$(date +%H:%M:%S) $*" >> /tmp/out/status; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > /tmp/out/gpu.txt
newest() { ls -t data/runs | head -1; }
T0=$(date +%s)
timeout 300 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k "one_loop_causal_short_d64" > /tmp/out/log_gpu_tests.txt 2>&1; rc_t=$?
say "gpu tests rc=$rc_t $(( $(date +%s)-T0 )) s: $(tail -1 /tmp/out/log_gpu_tests.txt | cut -c1-120)"
timeout 120 python -m lab sanitize --variants one_loop_causal_short_d64 --tools memcheck,racecheck,synccheck \
  --out /tmp/out/sanitize.json > /tmp/out/log_sanitize.txt 2>&1; rc_s=$?
say "sanitize rc=$rc_s $(( $(date +%s)-T0 )) s"
export EXP_CONFIGS='{"s59": ["queue_overlap_d64", {}], "s60": ["one_loop_causal_short_d64", {}]}'
export EXP_SHAPES='["8,16,512,64,causal", "4,16,512,64,causal", "1,8,512,64,causal", "8,16,512,64,causal,bf16",
  "4,16,1024,64,causal", "2,16,2048,64,causal", "1,8,512,64", "4,16,512,64", "8,16,512,64", "4,16,4096,64,causal"]'
OUT=/tmp/out timeout 150 python data/explorations/2026-11-28-kv-apart-d128/exp.py time 0.5 > /tmp/out/log_time.txt 2>&1
say "time rc=$? $(( $(date +%s)-T0 )) s"
if [ $rc_t -ne 0 ] || [ $rc_s -ne 0 ]; then say "a check failed: no recorded run"; say "all done"; touch /tmp/out/done; exit 0; fi
rm -rf data/runs/*  # the checks' own folders, if any: the run folder below is the only one
say "run start sha $LAB_GIT_SHA"
T1=$(date +%s)
python -m lab.pipeline --no-report > /tmp/out/log_run.txt 2>&1
say "run rc=$? wall=$(( $(date +%s)-T1 )) run=$(newest)"; newest > /tmp/out/run_main
say "all done"; touch /tmp/out/done
