#!/bin/bash
# Step 61's landing job (2026-12-03): step 60's run/land.sh (../../2026-12-02-step60-one-loop-causal-short-d64-draft)
# with step 61's name. Started by poll.sh beside it, in /tmp/lab on the GPU machine, in the background (setsid: it
# outlives a call).
# - RESUME_RUN set (a run folder an earlier call brought back, carried in data/runs/): `python -m lab.pipeline
#   --resume` it, which refuses another commit or GPU model (lab.studies.resume.resume_here) and records the machine;
#   no checks first (they ran with the run's start).
# - Else: step 61's GPU tests (the step and its knock-outs) and compute-sanitizer on the committed sources, then,
#   only if both pass, one recorded run at the defaults, without its report (made afterwards on the CPU machine).
cd /tmp/lab
source .whl/prelude.sh >/dev/null 2>&1; source .whl-tuning/prelude.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/lab:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0 LAB_GIT_SHA=$(cat .scratch/sha_run)
say() { echo "$(date +%H:%M:%S) $*" >> /tmp/out/status; }
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > /tmp/out/gpu.txt
if [ -n "$RESUME_RUN" ]; then
  say "resume $RESUME_RUN sha $LAB_GIT_SHA"; echo "$RESUME_RUN" > /tmp/out/run_main
  T1=$(date +%s)
  python -m lab.pipeline --resume "$RESUME_RUN" --no-report > /tmp/out/log_run.txt 2>&1
  say "run rc=$? wall=$(( $(date +%s)-T1 )) run=$RESUME_RUN"; say "all done"; touch /tmp/out/done; exit 0
fi
T0=$(date +%s)
timeout 300 python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_streams_and_configurations.py \
  -k "conditional_rescale" > /tmp/out/log_gpu_tests.txt 2>&1; rc_t=$?
say "gpu tests rc=$rc_t $(( $(date +%s)-T0 )) s: $(tail -1 /tmp/out/log_gpu_tests.txt | cut -c1-120)"
timeout 120 python -m lab sanitize --variants conditional_rescale --tools memcheck,racecheck,synccheck \
  --out /tmp/out/sanitize.json > /tmp/out/log_sanitize.txt 2>&1; rc_s=$?
say "sanitize rc=$rc_s $(( $(date +%s)-T0 )) s"
if [ $rc_t -ne 0 ] || [ $rc_s -ne 0 ]; then say "a check failed: no recorded run"; say "all done"; touch /tmp/out/done; exit 0; fi
rm -rf data/runs/*  # the checks' own folders, if any: the run folder below is the only one
say "run start sha $LAB_GIT_SHA"
T1=$(date +%s)
python -m lab.pipeline --no-report > /tmp/out/log_run.txt 2>&1
say "run rc=$? wall=$(( $(date +%s)-T1 )) run=$(ls -t data/runs | head -1)"; ls -t data/runs | head -1 > /tmp/out/run_main
say "all done"; touch /tmp/out/done
