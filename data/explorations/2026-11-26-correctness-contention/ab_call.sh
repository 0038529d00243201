#!/bin/bash
# Does the flex_attention warm-up (two processes) slow the correctness stage it runs beside?
# One fresh GPU machine: one build, then the correctness stage four times, arms A B B A:
#   A: the stage alone (`--stop-after correctness`: the pipeline starts no warm-up);
#   B: the same, with `python -m lab.studies.warm` (every timing shape, 2 processes) started when the
#      stage starts, as `make ablation` does.
# Each arm gets fresh torch inductor and Triton caches (both processes of a B arm share them, as in a
# run), so each pays the compiles a fresh machine pays. The warm-up compiles for the shapes of the first
# A run (the same shapes as every run here) and writes its record there.
# Usage (the run tool's command): bash data/explorations/2026-11-26-correctness-contention/ab_call.sh
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH LAB_GIT_SHA=$(cat .scratch/sha) LAB_GIT_DIRTY=0 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
mkdir -p data/runs
timeout 200 python -m lab.pipeline --no-report --stop-after build > $OUT/build.log 2>&1; echo "build rc=$?"
i=0; FIRST=$(ls data/runs | tail -1)  # the build-only run: the shapes the warm-up compiles for
for ARM in ${ARMS:-A B B A}; do
  i=$((i + 1))
  export TORCHINDUCTOR_CACHE_DIR=$(mktemp -d /tmp/inductor.XXXX) TRITON_CACHE_DIR=$(mktemp -d /tmp/triton.XXXX)
  LOG=$OUT/arm$i-$ARM.log
  timeout 200 python -m lab.pipeline --no-report --stop-after correctness > $LOG 2>&1 &
  PIPE=$!
  if [ $ARM = B ]; then
    until grep -q "== 02_correctness.ipynb" $LOG 2>/dev/null || ! kill -0 $PIPE 2>/dev/null; do sleep 0.2; done
    timeout 200 python -m lab.studies.warm $FIRST > $OUT/warm$i.log 2>&1 &
    WARM=$!
  fi
  wait $PIPE; echo "arm $i $ARM rc=$?"
  [ $ARM = B ] && { wait $WARM; echo "  warm-up rc=$?"; }
  R=$(ls data/runs | tail -1)
  echo "$i $ARM $R $(python -c "import json,sys; print(json.load(open('data/runs/$R/stages.json')).get('correctness_s'))")" >> $OUT/arms.txt
  [ $ARM = B ] && python -c "import json; d=json.load(open('data/runs/$FIRST/flex_warmup.json')); print('  warm-up', d.get('seconds'), 's,', d.get('workers'), 'processes')" >> $OUT/arms.txt
done
tar czf $OUT/runs.tgz -C data/runs $(ls data/runs | tail -4)
echo "arm  kind  run  correctness_s"; cat $OUT/arms.txt
