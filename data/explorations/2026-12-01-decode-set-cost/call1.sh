# Issue 50 target 4: the decode part of a run with its inputs drawn on the GPU (stage.py's header). About 250 s.
# Expectation, written before the call: drawing on the host costs about 4 s a GB (the fit in decode_study's
# timing_cost: 1.14 s a shape plus 4.16 s a GB), on the GPU under 0.1 s a GB; the stage's timing part falls from
# 68.3 s to 15-25 s, its checks from 24.9 s to 15-22 s, so the stage from 93.4 s to 35-50 s on this H200.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-01-decode-set-cost
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 540 python $E/stage.py $OUT > $OUT/stage.txt 2>&1; echo "rc=$?"
cp $OUT/runs/*/decode.json $OUT/decode.json 2>/dev/null; rm -rf $OUT/runs
grep -E "^inputs|decode:|decode stage|Traceback|Error" $OUT/stage.txt | cut -c1-220 | tail -40
grep -E "(hot|cold) +[0-9]+ impls in" $OUT/stage.txt | awk '{m[$1]+=$5; n[$1]++} END {for (k in m) print k, n[k], "shapes", m[k], "s"}'
