#!/bin/bash
# The timing-only run of README.md, as the lent GPU's command (the run tool: carry [".whl", ".scratch"],
# with the commit's full sha in .scratch/sha). The committed runs are moved out of the way on the GPU
# machine's copy, so the new run is the only one in data/runs; $OUT/run.tgz brings it back.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH LAB_GIT_SHA=$(cat .scratch/sha) LAB_GIT_DIRTY=0 PYTHONUNBUFFERED=1
mv data/runs data/runs_committed && mkdir -p data/runs
timeout -k 5 -s INT ${LIMIT:-160} python -m lab.pipeline --no-report --stop-after timing \
  --variants longest_first_queue --shapes models,models-fp16 --modes hot,cold --check none --knockouts 0 \
  --peers sdpa_cudnn > $OUT/log.txt 2>&1
echo "pipeline rc=$?"; grep -E "^== |shapes in" $OUT/log.txt | tail -8
R=$(ls data/runs | tail -1); tar czf $OUT/run.tgz -C data/runs $R; ls -la $OUT/run.tgz
