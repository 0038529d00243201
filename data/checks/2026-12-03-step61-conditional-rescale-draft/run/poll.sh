#!/bin/bash
# One device call of step 61's landing: where no job is under way on this machine (its first call, or a fresh machine
# after the last one was lost), copy the tree to /tmp/lab and start land.sh there in the background, resuming the run
# named in .scratch/resume_run if that file exists; then wait until the job is done or WAIT seconds have passed, and
# bring back the status, the logs' ends and the run folder so far (runs.tgz: unpack it into data/runs/ here, and
# write its name to .scratch/resume_run, so that a lost machine costs only the stage it was in).
S=$(date +%s)
LAND=data/checks/2026-12-03-step61-conditional-rescale-draft/run/land.sh
if [ ! -d /tmp/lab ]; then
  mkdir -p /tmp/out && cp -a . /tmp/lab && rm -rf /tmp/lab/build
  R=$(cat .scratch/resume_run 2>/dev/null)
  RESUME_RUN=$R setsid nohup bash /tmp/lab/$LAND > /tmp/out/bg.log 2>&1 < /dev/null &
  echo "started in the background from $PWD${R:+, resuming $R}"
else
  echo "job under way: $(tail -1 /tmp/out/status)"
fi
while [ ! -f /tmp/out/done ] && [ $(( $(date +%s) - S )) -lt ${WAIT:-540} ]; do sleep 5; done
cp /tmp/out/status /tmp/out/gpu.txt $OUT/ 2>/dev/null
for f in /tmp/out/log_*.txt; do tail -c 60000 $f > $OUT/$(basename $f); done
run=$(cat /tmp/out/run_main 2>/dev/null || ls -t /tmp/lab/data/runs | head -1)
[ -n "$run" ] && ( cd /tmp/lab && tar czf $OUT/runs.tgz data/runs/$run -C /tmp/out $(cd /tmp/out && ls sanitize.json 2>/dev/null) )
cat /tmp/out/status; grep -hE "^\[|stage times|FAIL|Error|error|failed|Traceback" /tmp/out/log_*.txt | tail -25
