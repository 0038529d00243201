# Device call 1 of data/explorations/2026-12-07-decode-mixed-phases-h200 (issue 50, target 1 on the H200), from the
# repository root on one H200 (GPU=H100 runs it on an H100: the same shapes, where target 1 misses cold), not while a
# landing's job times on the machine. About 4 minutes with the builds. Predictions and the decision rule: README.md.
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
source .whl/prelude.sh 2>/dev/null
P=data/explorations/2026-12-06-decode-phase-exposure
E=data/explorations/2026-12-07-decode-mixed-phases-h200
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
if ! grep -q "${GPU:-H200}" $OUT/gpu.txt; then echo "not an ${GPU:-H200}: nothing run"; cat $OUT/gpu.txt; exit 0; fi
python $P/diag_patch.py || exit 1
SHAPES="32,28,4,128,4096,mixed,bf16 32,28,4,128,4096,bf16 32,32,8,128,4096,mixed,bf16"
T0=$(date +%s)
EXPOSURE_END=persistent_decode_ctas EXPOSURE_BUILDS=no_merge,no_epilogue,movement_no_merge EXPOSURE_MODES=hot,cold \
  timeout 330 python $P/exposure.py $OUT $SHAPES > $OUT/log.txt 2>&1
echo "exposure rc=$? $(( $(date +%s)-T0 )) s"
T0=$(date +%s)
timeout 150 python $E/profile.py $OUT $SHAPES > $OUT/profile.txt 2>&1
echo "profile rc=$? $(( $(date +%s)-T0 )) s"
cat $OUT/gpu.txt
grep -E "^(hot|cold) |end.s check|Error|Traceback" $OUT/log.txt | tail -10 | cut -c1-700
tail -20 $OUT/profile.txt
