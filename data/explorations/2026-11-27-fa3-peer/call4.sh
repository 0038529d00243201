#!/usr/bin/env bash
# Device call 4: call 3 again with 400 ms turns, a 150 ms settle, three turns a row, and the sustained rows cut to the
# headline end, its parent, cuDNN and FA3 (hot: all seven as in call 3), the GPU
# tests of the timers, and the report section it gives.
set -uo pipefail
source .whl/prelude.sh
export LAB_GIT_SHA=$(cat .scratch/sha) LAB_GIT_DIRTY=0 PYTHONPATH=.:${PYTHONPATH:-}
T0=$SECONDS
python -m pytest -q -m gpu tests/test_gpu_timing_hold.py tests/test_fa3_peer.py -p no:cacheprovider 2>&1 | tail -3 | tee $OUT/gpu_tests.txt
timeout 420 python -m lab.pipeline --variants warp_release_d64,longest_first_queue,small_grid_tiles,portable_model_inputs \
  --shapes '4,16,4096,128;4,16,4096,128,causal' --modes hot,sustained --replicates 3 --profile 0 --knockouts 0 \
  --check quick --peers sdpa_flash,sdpa_cudnn,flash_attn3 > $OUT/pipeline.log 2>&1
echo "pipeline rc $? at $((SECONDS-T0)) s"; grep -n "stage times\|sustained" $OUT/pipeline.log | tail -8
RUN=$(python -c "from lab.measure import records; print(records.list_runs()[-1])"); echo "run $RUN"
tar czf $OUT/run.tgz --exclude=notebooks -C data/runs $RUN
python - <<PY > $OUT/section.md
import re
md = open("reports/OPTIMIZATION_REPORT.md").read()
print(md[md.index("## Burst and sustained"):md.index("\n## ", md.index("## Burst and sustained") + 5)])
PY
cat $OUT/section.md | head -60
echo "done at $((SECONDS-T0)) s"
