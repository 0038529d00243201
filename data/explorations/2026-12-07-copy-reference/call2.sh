# Device call 2 of data/explorations/2026-12-07-copy-reference (issue 50, target 1's bar), from the repository root,
# any H100 or H200: copy_bisect.py (about 2 minutes with the decode end's build). Predictions: README.md, call 2.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu2.txt
timeout 300 python data/explorations/2026-12-07-copy-reference/copy_bisect.py $OUT > $OUT/log2.txt 2>&1
echo "rc=$?"; cat $OUT/gpu2.txt; grep -v "^\s*$" $OUT/log2.txt | tail -16
