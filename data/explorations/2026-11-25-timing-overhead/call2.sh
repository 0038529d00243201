#!/bin/bash
# One H100 call: flex warm-up of the replayed shapes (as a run's warm-up stage does), then four fresh
# processes replaying ten jobs of 5cfdce3's timing plan (and job 0 again, warm): the stopping rule's
# old per-block cost against the cached rank (old, new, old, new under cProfile).
source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
T0=$SECONDS
JOBS="0 1 3 6 11 17 21 26 29 33 0"
python -m lab build > $OUT/build.txt 2>&1; echo "build rc=$? at $((SECONDS-T0)) s"
python - > $OUT/warm.txt 2>&1 <<'PY'
import json
from lab.studies.replicates import Job
from lab.studies.warm import warm_flex
plan = json.load(open("data/explorations/2026-11-25-timing-overhead/plan_5cfdce3.json"))
shapes = [Job.from_json(plan["jobs"][i]).shape for i in sorted(set(map(int, "0 1 3 6 11 17 21 26 29 33".split())))]
print(json.dumps(warm_flex(shapes))[:2000])
PY
echo "warm rc=$? at $((SECONDS-T0)) s"
for spec in "A old 0" "B new 0" "C old 0" "D new 1"; do
  set -- $spec
  timeout 150 python data/explorations/2026-11-25-timing-overhead/replay_jobs.py $OUT $1 $2 $3 $JOBS > $OUT/replay_$1.txt 2>&1
  echo "$1 rule=$2 profiled=$3 rc=$? at $((SECONDS-T0)) s"; tail -1 $OUT/replay_$1.txt
done
python - <<'PY'
import json, os
out = os.environ["OUT"]
rows = {l: json.load(open(f"{out}/{l}.json")) for l in "ABCD" if os.path.exists(f"{out}/{l}.json")}
print(f"{'job':>4} {'shape':<36}" + "".join(f" {l+' s':>7} {l+' ms/blk':>9}" for l in rows))
for k in range(len(next(iter(rows.values()))["jobs"])):
    j = next(iter(rows.values()))["jobs"][k]
    print(f"{j['job']:>4} {j['shape']:<36}" + "".join(
        f" {r['jobs'][k]['wall_s']:>7.2f} {1e3 * r['jobs'][k]['wall_s'] / max(1, r['jobs'][k]['blocks']):>9.2f}" for r in rows.values()))
print("startup", {l: r["startup_s"] for l, r in rows.items()}, "total", {l: r["total_s"] for l, r in rows.items()})
PY
