#!/bin/bash
# Device call 1 of data/explorations/2026-12-07-longest-first-deal (issue 50, target 1) and of
# ../2026-12-07-decode-round-levels, from the repository root on one GPU (H100 or H200; carry .whl), not while a
# landing's job times on the machine. Applies step73.patch to the device's copy, builds steps 72 and 73, runs step
# 73's decode GPU tests (and the new deal cases on step 72), times both steps at Llama-3-8B's mixed batch in 7 orders
# of its lengths beside the uniform twin (levels.py), then both beside the run's decode peers at the decode set
# (compare.py), then the sanitizers over step 73's grid with what time is left. About 10 minutes.
# Predictions and decision rules: README.md here and ../2026-12-07-decode-round-levels/README.md, written before.
source .whl/prelude.sh && echo prelude ok
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-07-longest-first-deal
R=data/explorations/2026-12-07-decode-round-levels
P=data/explorations/2026-12-06-persistent-decode-ctas
S=$(date +%s)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
(patch -p1 < $E/step73.patch || git apply $E/step73.patch) > $OUT/log_checks.txt 2>&1 \
  || { echo "patch failed"; exit 1; }
python -m lab build --variants persistent_decode_ctas,longest_first_deal >> $OUT/log_checks.txt 2>&1
echo "build rc=$? $(( $(date +%s)-S )) s"
timeout 150 python -m pytest -q -m gpu tests/test_gpu_decode.py -p no:cacheprovider \
  -k "longest_first_deal or (lengths_of_no_order and persistent_decode_ctas)" >> $OUT/log_checks.txt 2>&1
echo "gpu tests rc=$? $(( $(date +%s)-S )) s"; grep -E "passed|failed" $OUT/log_checks.txt | tail -2
LEVELS_ENDS=persistent_decode_ctas,longest_first_deal timeout 150 python $R/levels.py $OUT > $OUT/log_levels.txt 2>&1
echo "levels rc=$? $(( $(date +%s)-S )) s"
if [ "${COMPARE:-1}" = 1 ]; then  # COMPARE=0: a short call, the decode set left to the next
  COMPARE_STEP=longest_first_deal COMPARE_PARENT=persistent_decode_ctas timeout 200 python $P/compare.py $OUT \
    > $OUT/log_compare.txt 2>&1
  echo "compare rc=$? $(( $(date +%s)-S )) s"
fi
LEFT=$(( ${CALL_BUDGET:-560} - ($(date +%s)-S) ))  # CALL_BUDGET: the seconds the call may take
if [ $LEFT -gt 40 ]; then
  timeout $LEFT python -m lab sanitize --variants longest_first_deal >> $OUT/log_checks.txt 2>&1
  echo "sanitize rc=$? $(( $(date +%s)-S )) s"; [ -f sanitize.json ] && cp sanitize.json $OUT/
fi
cat $OUT/gpu.txt
grep -E "checks:|Error|Traceback" $OUT/log_levels.txt | tail -4 | cut -c1-300
grep -E "^\|" $OUT/log_levels.txt
grep -E "^(hot|cold) |Error|Traceback" $OUT/log_compare.txt | tail -40 | cut -c1-330
grep -E "memcheck|racecheck|synccheck|initcheck" $OUT/log_checks.txt | tail -4
