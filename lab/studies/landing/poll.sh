#!/bin/bash
# One device call of a step's landing (land.sh beside it). The first call, with FRESH=1, copies the tree to /tmp/lab
# and starts land.sh there in the background; a later call waits for that job until it is done or WAIT seconds (540)
# have passed. Each brings back under $OUT the status, the logs' ends and the run folder so far (runs.tgz, with
# sanitize.json where there is one).
# A later call that finds no job (the machine was lost, or released after 30 s idle: make the next call at once, and
# unpack runs.tgz after the last) refuses to start the landing over: unpack the last runs.tgz into data/runs/ here
# and write its folder's name to .scratch/resume_run, so that the run resumes and a lost machine costs only the stage
# it was in; or give FRESH=1 to start over.
#
#   STEP=<manifest name> [FRESH=1] [WAIT=<seconds>] [CHECKED=<where>] [RUN_ARGS=<flags>] bash lab/studies/landing/poll.sh
#   (carry .whl, .fa3, .scratch; .whl-tuning too where the run uses several GPUs: dask-cuda; CHECKED and RUN_ARGS: land.sh's)
set -u
S=$(date +%s)
if [ -z "${STEP:-}" ]; then echo "poll.sh: STEP is not set: name the step to land" >&2; exit 2; fi
if [ ! -s .scratch/sha_run ]; then
  echo "poll.sh: .scratch/sha_run is missing: write the commit to land there (git rev-parse HEAD) and carry .scratch" >&2
  exit 2
fi
TREE=${LAB_TREE:-/tmp/lab} JOB_OUT=${LAB_LAND_OUT:-/tmp/out}
if [ ! -d "$TREE" ]; then
  R=$(cat .scratch/resume_run 2>/dev/null)
  if [ -z "$R" ] && [ "${FRESH:-0}" != 1 ]; then
    echo "poll.sh: no landing under way on this machine and no .scratch/resume_run: unpack the last call's runs.tgz" \
      "into data/runs/ and name its folder in .scratch/resume_run to resume it, or give FRESH=1 to start over" >&2
    exit 3
  fi
  mkdir -p "$JOB_OUT" && cp -a . "$TREE" && rm -rf "$TREE/build"
  LAB_TREE=$TREE LAB_LAND_OUT=$JOB_OUT STEP=$STEP RESUME_RUN=$R RUN_ARGS="${RUN_ARGS:-}" setsid nohup bash "$TREE/lab/studies/landing/land.sh" \
    > "$JOB_OUT/bg.log" 2>&1 < /dev/null &
  echo "started $STEP in the background from $PWD${R:+, resuming $R}"
else
  echo "job under way: $(tail -1 "$JOB_OUT/status" 2>/dev/null)"
fi
while [ ! -f "$JOB_OUT/done" ] && [ $(( $(date +%s) - S )) -lt "${WAIT:-540}" ]; do sleep 5; done
cp "$JOB_OUT/status" "$JOB_OUT/gpu.txt" "$OUT/" 2>/dev/null
for f in "$JOB_OUT"/log_*.txt; do [ -f "$f" ] && tail -c 60000 "$f" > "$OUT/$(basename "$f")"; done
run=$(cat "$JOB_OUT/run_main" 2>/dev/null || ls -t "$TREE/data/runs" 2>/dev/null | head -1)
if [ -n "$run" ]; then
  extra=""; [ -f "$JOB_OUT/sanitize.json" ] && extra="-C $JOB_OUT sanitize.json"
  (cd "$TREE" && tar czf "$OUT/runs.tgz" "data/runs/$run" $extra)
fi
cat "$JOB_OUT/status" 2>/dev/null; grep -hE "^\[|stage times|FAIL|Error|error|failed|Traceback" "$JOB_OUT"/log_*.txt 2>/dev/null | tail -25
