#!/bin/bash
# Where the models set's time goes outside the kernels: a models-only timing run (1 replicate), then
# one more replicate of its plan under cProfile.
source .whl/prelude.sh 2>/dev/null
export LAB_GIT_DIRTY=0 PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PYTHONPATH LAB_GIT_SHA=$(cat .scratch/sha)
mv data/runs data/runs_committed && mkdir -p data/runs
timeout -k 5 -s INT 150 python -m lab.pipeline --no-report --stop-after timing --variants longest_first_queue,portable_model_inputs \
  --shapes models --modes hot,cold --check none --replicates 1 > $OUT/log.txt 2>&1; echo rc=$?
grep -E "^== |replicate .: " $OUT/log.txt
R=data/runs/$(ls data/runs | tail -1)
timeout 120 python -m cProfile -o $OUT/rep.prof -m lab.studies.replicates $R timing --replicate 1 > $OUT/log_prof.txt 2>&1; echo prof rc=$?
tail -2 $OUT/log_prof.txt
python -c "
import pstats; p=pstats.Stats('$OUT/rep.prof'); p.sort_stats('tottime').print_stats(25)" 2>&1 | tail -40 | cut -c1-160
tar czf $OUT/run.tgz -C data/runs .
