# Device call 3 of data/explorations/2026-12-07-copy-reference (issue 50, target 1's bar), from the repository root,
# any H100 or H200: copy_probe.py (about a minute with the decode end's build). See README.md, call 3.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu3.txt
timeout 240 python data/explorations/2026-12-07-copy-reference/copy_probe.py $OUT > $OUT/log3.txt 2>&1
echo "rc=$?"; cat $OUT/gpu3.txt; grep -v "^\s*$" $OUT/log3.txt | tail -14
