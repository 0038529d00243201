#!/bin/bash
# A step's landing job on the GPU machine: its GPU tests and compute-sanitizer on the committed sources, then, only if
# both pass, one recorded run at the defaults, without its report (made afterwards on the CPU machine: make report).
# Given RESUME_RUN (a run folder an earlier call brought back, carried in data/runs/), it resumes that run instead
# (`python -m lab.pipeline --resume`, which refuses another commit or GPU model and records the machine); the checks
# ran with the run's start. poll.sh starts it in the background in /tmp/lab (setsid: it outlives a device call) and
# reads /tmp/out: status (one line a stage), gpu.txt, log_*.txt, sanitize.json, run_main (the run's folder name), done.
#
#   STEP=<manifest name> [RESUME_RUN=<run folder>] [CHECKED=<where>] [RUN_ARGS=<flags>] bash lab/studies/landing/land.sh
#
# RUN_ARGS: flags for lab.pipeline where the run is not at the defaults (`--sustained large,long,models`: the sustained
# mode at every shape issue 46 judges, about 100 s more a replicate); a resumed run keeps its params.json.
#
# CHECKED: where the GPU tests and the sanitizer already passed on these very kernel sources (a committed check or
# exploration folder, after the last commit under kernels/): the landing skips them, says so in its status, and spends
# the device time on the run alone. Give it only where nothing those checks run changed since they passed: kernels/,
# lab/kernels/ but its SASS tooling (sass_mix), lab/measure/check.py and sanitize.py, tests/test_gpu_correctness.py,
# tests/test_gpu_streams_and_configurations.py and tests/ladder.py (git diff <that commit> HEAD -- those paths).
#
# The tree has no .git on the GPU machine: the commit it records is .scratch/sha_run's (poll.sh insists on it).
# Replaces the per-step copies (data/checks/*/run/land.sh, step 61's the last).
set -u
cd "${LAB_TREE:-/tmp/lab}" || exit 2
OUT_DIR=${LAB_LAND_OUT:-/tmp/out}
mkdir -p "$OUT_DIR"
say() { echo "$(date +%H:%M:%S) $*" >> "$OUT_DIR/status"; }
finish() { say "all done"; touch "$OUT_DIR/done"; exit "${1:-0}"; }
source .whl/prelude.sh >/dev/null 2>&1; source .whl-tuning/prelude.sh >/dev/null 2>&1
if [ -z "${STEP:-}" ]; then say "STEP is not set: name the step to land (a variant of kernels/variants/manifest.toml)"; finish 2; fi
if ! STEP="$STEP" python -c "import os; from lab.kernels.manifest import get; get(os.environ['STEP'])" \
    >/dev/null 2>"$OUT_DIR/log_step.txt"; then
  say "STEP=$STEP is no variant of the manifest: $(tail -1 "$OUT_DIR/log_step.txt" | cut -c1-200)"; finish 2
fi
if [ ! -s .scratch/sha_run ]; then say ".scratch/sha_run is missing: the commit the run records (git rev-parse HEAD)"; finish 2; fi
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0 LAB_GIT_SHA=$(cat .scratch/sha_run)
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,uuid --format=csv,noheader > "$OUT_DIR/gpu.txt"
if [ -n "${RESUME_RUN:-}" ]; then
  say "resume $RESUME_RUN sha $LAB_GIT_SHA"; echo "$RESUME_RUN" > "$OUT_DIR/run_main"
  T1=$(date +%s)
  python -m lab.pipeline --resume "$RESUME_RUN" --no-report > "$OUT_DIR/log_run.txt" 2>&1
  say "run rc=$? wall=$(( $(date +%s)-T1 )) run=$RESUME_RUN"; finish
fi
T0=$(date +%s)
if [ -n "${CHECKED:-}" ]; then
  say "gpu tests and sanitizer skipped: they passed on these kernel sources in $CHECKED"
else
  timeout "${GPU_TEST_TIMEOUT:-300}" python -m pytest -q -p no:cacheprovider tests/test_gpu_correctness.py \
    tests/test_gpu_streams_and_configurations.py -k "$STEP" > "$OUT_DIR/log_gpu_tests.txt" 2>&1; rc_t=$?
  say "gpu tests rc=$rc_t $(( $(date +%s)-T0 )) s: $(tail -1 "$OUT_DIR/log_gpu_tests.txt" | cut -c1-120)"
  timeout "${SANITIZE_TIMEOUT:-120}" python -m lab sanitize --variants "$STEP" --tools memcheck,racecheck,synccheck \
    --out "$OUT_DIR/sanitize.json" > "$OUT_DIR/log_sanitize.txt" 2>&1; rc_s=$?
  say "sanitize rc=$rc_s $(( $(date +%s)-T0 )) s"
  if [ $rc_t -ne 0 ] || [ $rc_s -ne 0 ]; then say "a check failed: no recorded run"; finish; fi
fi
rm -rf data/runs/*  # the checks' own folders, if any: the run folder below is the only one
say "run start sha $LAB_GIT_SHA${RUN_ARGS:+ with $RUN_ARGS}"
T1=$(date +%s)
# shellcheck disable=SC2086  # RUN_ARGS: flags split on spaces
python -m lab.pipeline --no-report ${RUN_ARGS:-} > "$OUT_DIR/log_run.txt" 2>&1
say "run rc=$? wall=$(( $(date +%s)-T1 )) run=$(ls -t data/runs | head -1)"; ls -t data/runs | head -1 > "$OUT_DIR/run_main"
finish
