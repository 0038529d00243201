#!/bin/bash
# Issue 22 target 5 on an H100. HEAD's HotTimer captures with capture_begin/capture_end on its side stream;
# the base (aec1bfe, an archive under .scratch/base) with torch.cuda.graph. One call:
#   1. the tests of the timing harness and of its users on the GPU, and the warm-up's;
#   2. the two-process flex_attention warm-up of the default run's 36 shapes, caches cold (fresh machine);
#   3. two models-only timing runs, HEAD then base, same build, caches warm from 2.
source .whl/prelude.sh 2>/dev/null
export LAB_GIT_DIRTY=0 PYTHONUNBUFFERED=1
ROOT=$PWD; BASEP=$PYTHONPATH
export PYTHONPATH=$ROOT:$BASEP
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
timeout 240 python -m pytest -q -x tests/test_gpu_timing_hold.py tests/test_gpu_streams_and_configurations.py tests/test_warmup.py tests/test_peers.py tests/test_models_study.py tests/test_stopping_rule.py > $OUT/log_tests.txt 2>&1
echo "tests rc=$?"; tail -2 $OUT/log_tests.txt
python - > $OUT/warm.json 2> $OUT/log_warm.txt <<'PY'
import json
from lab.studies import warm
from lab.studies.params import RunParams
print(json.dumps(warm.warm_in_parallel(warm.shapes_to_warm(RunParams.from_text()), 2)))
PY
echo "warm rc=$?"; python -c "import json; d=json.load(open('$OUT/warm.json')); print('warm-up', d['seconds'], 's, workers', d['workers'], 'failed', d['failed'], 'sum of rows', round(sum(r['seconds'] for r in d['shapes']),1))"
ARGS="--no-report --stop-after timing --variants longest_first_queue,portable_model_inputs --shapes models --modes hot,cold --check none"
mv data/runs data/runs_committed && mkdir -p data/runs build
ln -s $ROOT/build .scratch/base/build
( export LAB_GIT_SHA=$(cat .scratch/sha); timeout -k 5 -s INT 200 python -m lab.pipeline $ARGS > $OUT/log_head.txt 2>&1; echo head rc=$? )
( cd .scratch/base && export PYTHONPATH=$PWD:$BASEP LAB_GIT_SHA=$(cat $ROOT/.scratch/sha_base); timeout -k 5 -s INT 170 python -m lab.pipeline $ARGS > $OUT/log_base.txt 2>&1; echo base rc=$? )
grep -E "^== " $OUT/log_head.txt $OUT/log_base.txt
python - <<'PY'
import json, glob
for root in ("data/runs", ".scratch/base/data/runs"):
    for run in sorted(glob.glob(root + "/*")):
        per = []
        for f in sorted(glob.glob(run + "/replicates/timing/r*.json")):
            notes = json.load(open(f))["notes"]
            per.append((round(sum(n["seconds"] for n in notes if n.get("scope") == "models"), 1),
                        round(sum(n["seconds"] for n in notes[1:] if n.get("scope") == "models"), 1)))
        print(run.split("/")[-1], "models job s per replicate (all, without the first shape)", per,
              "totals", round(sum(a for a, _ in per), 1), round(sum(b for _, b in per), 1))
PY
cd $ROOT && tar czf $OUT/runs.tgz -C data/runs . -C $ROOT/.scratch/base/data/runs . && ls -la $OUT
