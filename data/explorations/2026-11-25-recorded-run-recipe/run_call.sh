#!/bin/bash
# A recorded run of `make ablation`'s stages on a lent GPU, in calls of at most 600 s: the first with
# LIMIT=540; each further one with the partial run from the last call's $OUT/run.tgz copied to
# .scratch/run.tgz.in (it resumes). Before the first call: move data/runs/* aside locally (the tree
# plus the carried wheels must stay under 64 MiB) and write the full commit sha to .scratch/sha.
# Usage (the run tool's command): LIMIT=540 bash data/explorations/2026-11-25-recorded-run-recipe/run_call.sh
# RUN_ARGS: the first call's run parameters (e.g. RUN_ARGS="--gpus 4 --replicates 4"); a resumed run keeps its own.
source .whl/prelude.sh 2>/dev/null
[ -d .whl-tuning ] && source .whl-tuning/prelude.sh 2>/dev/null  # dask-cuda for GPUS > 1
export PYTHONPATH=$PWD:$PYTHONPATH LAB_GIT_SHA=$(cat .scratch/sha) LAB_GIT_DIRTY=0 PYTHONUNBUFFERED=1
RESUME="${RUN_ARGS:-}"
if [ -f .scratch/run.tgz.in ]; then
  mkdir -p data/runs && tar xzf .scratch/run.tgz.in -C data/runs
  RESUME="--resume $(ls data/runs | tail -1)"
fi
timeout -k 15 -s INT ${LIMIT:-540} python -m lab.pipeline --no-report $RESUME > $OUT/log.txt 2>&1
echo "pipeline rc=$?"; grep -E "^== |stage times|stopped|measured" $OUT/log.txt | tail -n 12
R=$(ls data/runs | tail -1); tar czf $OUT/run.tgz -C data/runs $R; ls -la $OUT/run.tgz
