#!/bin/bash
# One H100 call: (1) why a fresh process spends seconds importing torch's compiler stack (bytecode
# cache facts, import times with and without PYTHONPYCACHEPREFIX); (2) the hold's GPU tests;
# (3) four fresh processes replaying ten jobs of 5cfdce3's plan, blocks behind the fixed sleep (E, G)
# or the hold (F, H), both with the cached stopping-rule rank; medians compared hold vs sleep.
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
python - <<'PY' | tee $OUT/pycache.txt
import os, sys, torch, glob
d = os.path.dirname(torch.__file__)
print("PYTHONDONTWRITEBYTECODE", os.environ.get("PYTHONDONTWRITEBYTECODE"), "dont_write_bytecode", sys.dont_write_bytecode,
      "pycache_prefix", sys.pycache_prefix, "torch dir writable", os.access(d, os.W_OK),
      "pyc files under torch/_dynamo", len(glob.glob(d + "/_dynamo/__pycache__/*.pyc")))
PY
IMP="import torch, torch._dynamo, torch._inductor.compile_fx, torch.nn.attention.flex_attention"
for i in 1 2; do s=$SECONDS; python -X importtime -c "$IMP" 2> $OUT/importtime_$i.txt; echo "plain import $i: $(tail -1 $OUT/importtime_$i.txt | cut -c1-60)"; done | tee -a $OUT/pycache.txt
for i in 1 2 3; do PYTHONPYCACHEPREFIX=/tmp/pyc python -X importtime -c "$IMP" 2> /tmp/it.txt; echo "prefix import $i: $(tail -1 /tmp/it.txt | cut -c1-60)"; done | tee -a $OUT/pycache.txt
python -m lab build > /dev/null 2>&1; echo "build rc=$? at $((SECONDS-T0)) s"
python -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_timing_hold.py tests/test_gpu_launch_plumbing.py 2>&1 | tail -3 | tee $OUT/gpu_tests.txt
JOBS="0 1 3 6 11 17 21 26 29 33 0"
python - > /dev/null 2>&1 <<'PY'
import json
from lab.studies.replicates import Job
from lab.studies.warm import warm_flex
plan = json.load(open("data/explorations/2026-11-25-timing-overhead/plan_5cfdce3.json"))
warm_flex([Job.from_json(plan["jobs"][i]).shape for i in (0, 1, 3, 6, 11, 17, 21, 26, 29, 33)])
PY
echo "warm at $((SECONDS-T0)) s"
for spec in "E sleep" "F hold" "G sleep" "H hold"; do
  set -- $spec
  REPLAY_HOLD=$2 timeout 150 python data/explorations/2026-11-25-timing-overhead/replay_jobs.py $OUT $1 new 0 $JOBS > /tmp/replay_$1.txt 2>&1
  echo "$1 $2 rc=$? at $((SECONDS-T0)) s"; tail -1 /tmp/replay_$1.txt
done
python data/explorations/2026-11-25-timing-overhead/compare_replays.py $OUT E F G H | tee $OUT/compare.txt
