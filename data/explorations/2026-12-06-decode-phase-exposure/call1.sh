# Device call 1 of data/explorations/2026-12-06-decode-phase-exposure (issue 50, target 2), from the repository root
# on one H100 (no carry needed). About 5 minutes with the builds. Predictions and the decision rule: README.md.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-06-decode-phase-exposure
python $E/diag_patch.py || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
EXPOSURE_MODES=hot,cold timeout 520 python $E/exposure.py $OUT \
  64,32,8,128,1024,bf16 64,64,8,128,1024,bf16 1,32,8,128,131072,bf16 8,32,8,128,8192,bf16 > $OUT/log.txt 2>&1
echo "exposure rc=$?"
cat $OUT/gpu.txt
grep -E "^(hot|cold) |end.s check|Error|Traceback" $OUT/log.txt | tail -14
