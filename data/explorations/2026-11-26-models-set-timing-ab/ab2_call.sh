#!/bin/bash
# Issue 22 target 5 on an H100, calls 2 and 3 (the same script, HEAD against base 7476736, an archive under
# .scratch/base). Call 2, HEAD 6183465: hot blocks and estimates behind a 0.3 ms sleep, estimates of one
# timed launch above 1 ms. Call 3, HEAD 00bb6c7: only the estimate, one block sized by the warm-up launch.
#   1. the timing harness's GPU tests;
#   2. a models-only HEAD run built, then its two-process flex_attention warm-up through the module's CLI
#      (caches cold: a fresh machine), timed;
#   3. models-only timing: HEAD, base, HEAD again (the A/A pair shows the noise the A/B is read against).
source .whl/prelude.sh 2>/dev/null
export LAB_GIT_DIRTY=0 PYTHONUNBUFFERED=1
ROOT=$PWD; BASEP=$PYTHONPATH
export PYTHONPATH=$ROOT:$BASEP
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
timeout 150 python -m pytest -q -x tests/test_gpu_timing_hold.py tests/test_timing_hold.py tests/test_warmup.py > $OUT/log_tests.txt 2>&1
echo "tests rc=$?"; tail -2 $OUT/log_tests.txt
ARGS="--no-report --variants longest_first_queue,portable_model_inputs --shapes models --modes hot,cold --check none"
mv data/runs data/runs_committed && mkdir -p data/runs build
ln -s $ROOT/build .scratch/base/build
export LAB_GIT_SHA=$(cat .scratch/sha)
python -m lab.pipeline $ARGS --stop-after build > $OUT/log_head1.txt 2>&1; echo "build rc=$?"
RUN=$(ls data/runs | tail -1)
/usr/bin/time -f "warm-up wall %e s" python -m lab.studies.warm $RUN 2>&1 | tail -2
timeout -k 5 -s INT 150 python -m lab.pipeline $ARGS --resume $RUN --stop-after timing >> $OUT/log_head1.txt 2>&1; echo "head1 rc=$?"
( cd .scratch/base && export PYTHONPATH=$PWD:$BASEP LAB_GIT_SHA=$(cat $ROOT/.scratch/sha_base); timeout -k 5 -s INT 150 python -m lab.pipeline $ARGS --stop-after timing > $OUT/log_base.txt 2>&1; echo base rc=$? )
timeout -k 5 -s INT 150 python -m lab.pipeline $ARGS --stop-after timing > $OUT/log_head2.txt 2>&1; echo "head2 rc=$?"
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
cd $ROOT && tar czf $OUT/runs.tgz -C data/runs . -C $ROOT/.scratch/base/data/runs . && ls -la $OUT | tail -n +2
