#!/usr/bin/env bash
# Device call 1 (H100): FA3 through the shim on a GPU, and the records layout of issue 44 end to end.
#   1. the shim against the real handler: version, the peers' correctness grid, a CUDA-graph replay (GPU tests)
#   2. a short pipeline run with FA3 among the peers (2 replicates): folded records, report
#   3. xval.py: FA3's and cuDNN's hot medians against Nsight Compute's durations, step 35 against both
set -uo pipefail
source .whl/prelude.sh
export LAB_GIT_SHA=$(cat .scratch/sha) LAB_GIT_DIRTY=0 PYTHONPATH=.:${PYTHONPATH:-}
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
python -m lab.measure.fa3 2>&1 | tail -3
python -m pytest -q -m gpu tests/test_fa3_peer.py -p no:cacheprovider 2>&1 | tail -5 | tee $OUT/gpu_tests.txt
echo "tests done at $((SECONDS-T0)) s"
timeout 330 python -m lab.pipeline --variants mma_sync,async_pipeline --shapes canonical --modes hot,cold \
  --replicates 2 --profile 0 --knockouts 0 --check quick --peers sdpa_flash,sdpa_cudnn,flash_attn3 > $OUT/pipeline.log 2>&1
echo "pipeline rc $? at $((SECONDS-T0)) s"; tail -5 $OUT/pipeline.log
RUN=$(python -c "from lab.measure import records; print(records.list_runs()[-1])"); echo "run $RUN"; find data/runs/$RUN -maxdepth 2 | sort | head -40
tar czf $OUT/run.tgz --exclude=notebooks -C data/runs $RUN
timeout 200 python data/explorations/2026-11-27-fa3-peer/xval.py $OUT 2>&1 | grep -v Warning | tee $OUT/xval.txt
echo "done at $((SECONDS-T0)) s"
