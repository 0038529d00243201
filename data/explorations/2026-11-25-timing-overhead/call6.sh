#!/bin/bash
# One H100 call after the hold and the in-graph hot events landed: the GPU tests of timing, the
# launch plumbing and the peers; then two fresh processes replaying the ten jobs (F, H) with the
# new code, to set beside call 3's E and G (fixed sleep, events on the stream).
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
python -m lab build > /dev/null 2>&1; echo "build rc=$? at $((SECONDS-T0)) s"
python -c "from lab.measure import hold; print('hold:', hold.kind())"
python -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_timing_hold.py tests/test_gpu_launch_plumbing.py \
  tests/test_peers.py tests/test_stopping_rule.py 2>&1 | tail -3 | tee $OUT/gpu_tests.txt
JOBS="0 1 3 6 11 17 21 26 29 33 0"
python - > /dev/null 2>&1 <<'PY'
import json
from lab.studies.replicates import Job
from lab.studies.warm import warm_flex
plan = json.load(open("data/explorations/2026-11-25-timing-overhead/plan_5cfdce3.json"))
warm_flex([Job.from_json(plan["jobs"][i]).shape for i in (0, 1, 3, 6, 11, 17, 21, 26, 29, 33)])
PY
echo "warm at $((SECONDS-T0)) s"
for L in F H; do
  timeout 150 python data/explorations/2026-11-25-timing-overhead/replay_jobs.py $OUT $L new 0 $JOBS > $OUT/replay_$L.txt 2>&1
  echo "$L rc=$? at $((SECONDS-T0)) s"; tail -2 $OUT/replay_$L.txt
done
python data/explorations/2026-11-25-timing-overhead/compare_replays.py $OUT F H | tail -4
