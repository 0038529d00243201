#!/bin/bash
# ncu of step 33 and cuDNN at the canonical S = 512 shapes step 33 still trails cuDNN at
# (.scratch/ncu_target.py is ../../2026-11-25-d64-tiles/ncu_target.py)
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
for s in 4,16,512,64 8,16,512,64; do for L in three_ctas_d64 cudnn; do
  ncu --clock-control none --nvtx --nvtx-include "prof/" --csv --page raw --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats \
    python .scratch/ncu_target.py $L three_ctas_d64 '{}' $s > $OUT/ncu_${L}_${s//,/_}.csv 2>$OUT/ncu_${L}_${s//,/_}.err || tail -3 $OUT/ncu_${L}_${s//,/_}.err
done; done
ls -la $OUT
