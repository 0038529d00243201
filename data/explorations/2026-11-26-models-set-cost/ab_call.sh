#!/bin/bash
# Issue 22 target 5 on an H100: the models set's job seconds with HEAD and with 517446e (SDPA's
# default dispatch still timed there), models-only timing runs, same machine, HEAD first.
source .whl/prelude.sh 2>/dev/null
export LAB_GIT_DIRTY=0 PYTHONUNBUFFERED=1
ARGS="--no-report --stop-after timing --variants longest_first_queue,portable_model_inputs --shapes models --modes hot,cold --check none"
ROOT=$PWD; BASEP=$PYTHONPATH
mv data/runs data/runs_committed && mkdir -p data/runs build
ln -s $ROOT/build .scratch/base/build
( export PYTHONPATH=$ROOT:$BASEP LAB_GIT_SHA=$(cat .scratch/sha); timeout -k 5 -s INT 260 python -m lab.pipeline $ARGS > $OUT/log_head.txt 2>&1; echo head rc=$? )
( cd .scratch/base && export PYTHONPATH=$PWD:$BASEP LAB_GIT_SHA=$(cat $ROOT/.scratch/sha_base); timeout -k 5 -s INT 200 python -m lab.pipeline $ARGS > $OUT/log_base.txt 2>&1; echo base rc=$? )
grep -E "^== |replicate .: " $OUT/log_head.txt $OUT/log_base.txt
python - <<'PY'
import json, glob
for root in ("data/runs", ".scratch/base/data/runs"):
    for run in sorted(glob.glob(root + "/*")):
        per = []
        for f in sorted(glob.glob(run + "/replicates/timing/r*.json")):
            d = json.load(open(f)); per.append(round(sum(n["seconds"] for n in d["notes"] if n.get("scope") == "models"), 1))
        print(run.split("/")[-1], "models job seconds per replicate", per, "total", round(sum(per), 1))
PY
cd $ROOT && tar czf $OUT/runs.tgz -C data/runs . -C $ROOT/.scratch/base/data/runs . && ls -la $OUT
