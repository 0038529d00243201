#!/bin/bash
# Issue 49 on a host of two GPUs: a small run with its replicates side by side (GPUS=2), then the same one
# after another (GPUS=1), to see the pool work on real GPUs and what it saves.
source .whl/prelude.sh 2>/dev/null; source .whl-tuning/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1 LAB_GIT_DIRTY=0
nvidia-smi --query-gpu=index,name,power.limit,uuid --format=csv,noheader
python -c "import dask_cuda, distributed; print('dask_cuda', dask_cuda.__version__, 'distributed', distributed.__version__)"
ARGS="--no-report --variants tma,longest_first_queue,uniform_descriptors --shapes canonical --modes hot --check quick --knockouts 0 --profile 0 --replicates 4"
for G in 2 1; do
  T0=$(date +%s)
  timeout $([ $G = 2 ] && echo 230 || echo 160) python -m lab.pipeline $ARGS --gpus $G > $OUT/log_gpus$G.txt 2>&1
  echo "== GPUS=$G rc=$? $(( $(date +%s)-T0 )) s"; grep -E "side by side|replicate . of|stage times|measured|Error|error" $OUT/log_gpus$G.txt | tail -8
  R=$(ls -t data/runs | head -1); cp data/runs/$R/replicates.json $OUT/replicates_gpus$G.json; cp data/runs/$R/stages.json $OUT/stages_gpus$G.json
  tar czf $OUT/run_gpus$G.tgz -C data/runs $R
done
