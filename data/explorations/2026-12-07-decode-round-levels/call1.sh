#!/bin/bash
# Device call 1 of data/explorations/2026-12-07-decode-round-levels (issue 50, target 1), from the repository root on
# one GPU (H100 or H200), not while a landing's job times on the machine. About 2 minutes with the build.
# Predictions and the decision rule: README.md, written before the call.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
source .whl/prelude.sh 2>/dev/null
E=data/explorations/2026-12-07-decode-round-levels
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
timeout 400 python $E/levels.py $OUT > $OUT/log.txt 2>&1
echo "levels rc=$? $(( $(date +%s)-T0 )) s"
cat $OUT/gpu.txt
grep -E "checks:|Error|Traceback" $OUT/log.txt | tail -5 | cut -c1-400
grep -E "^\|" $OUT/log.txt
