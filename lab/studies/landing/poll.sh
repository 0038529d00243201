#!/bin/bash
# One device call of a step's landing (land.sh beside it). Where no job is under way on this machine (its first call,
# or a fresh machine after the last was lost), copy the tree to /tmp/lab and start land.sh there in the background,
# resuming the run named in .scratch/resume_run if that file exists; then wait until the job is done or WAIT seconds
# (540) have passed, and bring back under $OUT the status, the logs' ends and the run folder so far (runs.tgz, with
# sanitize.json where there is one: unpack it into data/runs/ here and write its name to .scratch/resume_run, so that
# a lost machine costs only the stage it was in).
#
#   STEP=<manifest name> [WAIT=<seconds>] bash lab/studies/landing/poll.sh     (carry .whl, .whl-tuning, .scratch)
set -u
S=$(date +%s)
if [ -z "${STEP:-}" ]; then echo "poll.sh: STEP is not set: name the step to land" >&2; exit 2; fi
if [ ! -s .scratch/sha_run ]; then
  echo "poll.sh: .scratch/sha_run is missing: write the commit to land there (git rev-parse HEAD) and carry .scratch" >&2
  exit 2
fi
if [ ! -d /tmp/lab ]; then
  mkdir -p /tmp/out && cp -a . /tmp/lab && rm -rf /tmp/lab/build
  R=$(cat .scratch/resume_run 2>/dev/null)
  STEP=$STEP RESUME_RUN=$R setsid nohup bash /tmp/lab/lab/studies/landing/land.sh > /tmp/out/bg.log 2>&1 < /dev/null &
  echo "started $STEP in the background from $PWD${R:+, resuming $R}"
else
  echo "job under way: $(tail -1 /tmp/out/status 2>/dev/null)"
fi
while [ ! -f /tmp/out/done ] && [ $(( $(date +%s) - S )) -lt "${WAIT:-540}" ]; do sleep 5; done
cp /tmp/out/status /tmp/out/gpu.txt "$OUT/" 2>/dev/null
for f in /tmp/out/log_*.txt; do [ -f "$f" ] && tail -c 60000 "$f" > "$OUT/$(basename "$f")"; done
run=$(cat /tmp/out/run_main 2>/dev/null || ls -t /tmp/lab/data/runs 2>/dev/null | head -1)
if [ -n "$run" ]; then
  extra=""; [ -f /tmp/out/sanitize.json ] && extra="-C /tmp/out sanitize.json"
  (cd /tmp/lab && tar czf "$OUT/runs.tgz" "data/runs/$run" $extra)
fi
cat /tmp/out/status 2>/dev/null; grep -hE "^\[|stage times|FAIL|Error|error|failed|Traceback" /tmp/out/log_*.txt 2>/dev/null | tail -25
