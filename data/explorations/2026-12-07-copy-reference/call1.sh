# Device call 1 of data/explorations/2026-12-07-copy-reference (issue 50, target 1's bar), from the repository root,
# any H100 or H200. About 2 minutes. Predictions and the decision rule: README.md.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 200 python data/explorations/2026-12-07-copy-reference/copy_state.py $OUT > $OUT/log.txt 2>&1
echo "rc=$?"; cat $OUT/gpu.txt; cat $OUT/log.txt | tail -12
