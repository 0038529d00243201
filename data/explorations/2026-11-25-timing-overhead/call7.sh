#!/bin/bash
# One H100 call: the new MIN_BLOCKS default's cost where blocks dominate (ten jobs of 5cfdce3's plan
# replayed in fresh processes with MIN_BLOCKS 2 and 6, twice each), and the import time of torch's
# compiler stack in a fresh process with and without a bytecode cache (PYTHONDONTWRITEBYTECODE=1 here).
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
IMP="import time; t=time.perf_counter(); import torch, torch._dynamo, torch._inductor.compile_fx, torch.nn.attention.flex_attention; print(round(time.perf_counter()-t, 2))"
for i in 1 2; do echo "import, no bytecode cache: $(python -c "$IMP") s"; done | tee $OUT/imports.txt
for i in 1 2 3; do echo "import, PYTHONPYCACHEPREFIX (run $i): $(PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=/tmp/pyc python -c "$IMP") s"; done | tee -a $OUT/imports.txt
python -m lab build > /dev/null 2>&1; echo "build rc=$? at $((SECONDS-T0)) s"
JOBS="0 1 3 6 11 17 21 26 29 33 0"
python - > /dev/null 2>&1 <<'PY'
import json
from lab.studies.replicates import Job
from lab.studies.warm import warm_flex
plan = json.load(open("data/explorations/2026-11-25-timing-overhead/plan_5cfdce3.json"))
warm_flex([Job.from_json(plan["jobs"][i]).shape for i in (0, 1, 3, 6, 11, 17, 21, 26, 29, 33)])
PY
echo "warm at $((SECONDS-T0)) s"
for spec in "P 2" "Q 6" "R 2" "S 6"; do
  set -- $spec
  REPLAY_MIN_BLOCKS=$2 timeout 150 python data/explorations/2026-11-25-timing-overhead/replay_jobs.py $OUT $1 new 0 $JOBS > /tmp/replay_$1.txt 2>&1
  echo "$1 MIN_BLOCKS=$2 rc=$? at $((SECONDS-T0)) s"; tail -1 /tmp/replay_$1.txt
done
python data/explorations/2026-11-25-timing-overhead/compare_replays.py $OUT P R Q S | tee $OUT/compare.txt | grep -v "^ *[0-9]"
