#!/bin/bash
# One call: start the background runs where none is under way (first call), then wait until they are done
# or WAIT seconds have passed; bring back the status, the logs' ends and the run folders so far.
S=$(date +%s)
[ -n "$RESTART" ] && rm -rf /tmp/lab /tmp/out
if [ ! -d /tmp/lab ]; then
  mkdir -p /tmp/out && cp -a . /tmp/lab && rm -rf /tmp/lab/build
  setsid nohup bash /tmp/lab/.scratch/bg.sh "$PWD" > /tmp/out/bg.log 2>&1 < /dev/null &
  echo "started in the background from $PWD"
else
  echo "background runs under way: $(tail -1 /tmp/out/status)"
fi
while [ ! -f /tmp/out/done ] && [ $(( $(date +%s) - S )) -lt ${WAIT:-540} ]; do sleep 5; done
cp /tmp/out/status /tmp/out/gpu.txt $OUT/ 2>/dev/null
for f in /tmp/out/log_*.txt; do tail -c 60000 $f > $OUT/$(basename $f); done
runs=$(cat /tmp/out/run_* 2>/dev/null; ls -t /tmp/lab/data/runs | head -1)
( cd /tmp/lab && tar czf $OUT/runs.tgz $(echo $runs | tr ' ' '\n' | sort -u | sed 's|^|data/runs/|') \
    $( [ -f /tmp/out/tune_run ] && echo data/tuning/$(cat /tmp/out/tune_run) kernels/variants/dispatch_*.json ) \
    -C /tmp/out $(cd /tmp/out && ls sanitize.json time_*.json ncu_*.csv sweep.json 2>/dev/null) 2>/dev/null )
cat /tmp/out/status; grep -hE "^\[|stage times|FAIL|Error|error|failed|Traceback" /tmp/out/log_*.txt | tail -25
