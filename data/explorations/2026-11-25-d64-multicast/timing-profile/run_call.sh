#!/bin/bash
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_SHA=$(cat .scratch/sha 2>/dev/null || echo unknown) LAB_GIT_DIRTY=0
E=data/explorations/2026-11-25-d64-multicast/timing-profile
mkdir -p data/runs_aside && mv data/runs/* data/runs_aside/ 2>/dev/null
T0=$SECONDS
timeout -k 10 190 python $E/driver.py --no-report --check none --shapes canonical --replicates 1 --knockouts 0 --profile 0 --stop-after timing > $OUT/log.txt 2>&1
echo "rc=$? after $((SECONDS-T0)) s"; tail -n 5 $OUT/log.txt
R=$(ls data/runs | tail -1); cp data/runs/$R/stages.json data/runs/$R/replicates.json $OUT/ 2>/dev/null; ls $OUT
