# Device call 4 of data/explorations/2026-12-07-copy-reference (issue 50, target 1's bar), from the repository root,
# any H100 or H200: lead_in_check.py (about a minute with the decode end's build). See README.md, call 4.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu4.txt
timeout 200 python data/explorations/2026-12-07-copy-reference/lead_in_check.py $OUT > $OUT/log4.txt 2>&1
echo "rc=$?"; cat $OUT/gpu4.txt; grep -v "^\s*$" $OUT/log4.txt | tail -8
