#!/bin/bash
# Host-side fix of fa::opt_in_shared_memory (one flag per kernel): the new GPU test, the old header
# failing it, and every variant and the end's knock-outs through the full correctness grid.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
timeout 60 python -m pytest -q -p no:cacheprovider tests/test_gpu_launch_plumbing.py 2>&1 | tail -n 3
python - <<'PY' 2>&1 | tail -n 2
import sys, tempfile, pathlib; sys.path.insert(0, "tests")
from test_gpu_launch_plumbing import launch_both
print("old header:", launch_both(pathlib.Path(tempfile.mkdtemp()), ".scratch/old-include"))
print("new header:", launch_both(pathlib.Path(tempfile.mkdtemp())))
PY
echo "tests at $((SECONDS-T0)) s"
ALL=$(python -c "from lab.kernels import switches as sw, variants as v; print(','.join([x.name for x in v.manifest()]+[k.impl for k in sw.knockouts('warp_release_d64', sw.load()[0])]))")
timeout 170 python -m lab check --variants $ALL --out $OUT/check.json > $OUT/check.txt 2>&1; echo "check rc=$?"
grep -E "FAIL" $OUT/check.txt | head -5; grep -cE "^\S+\s+[0-9]+/[0-9]+" $OUT/check.txt; grep -E "^\S+\s+[0-9]+/[0-9]+" $OUT/check.txt | awk '{split($2,a,"/"); if (a[1]!=a[2]) print}' | head; tail -n 1 $OUT/check.txt
echo "done at $((SECONDS-T0)) s"
