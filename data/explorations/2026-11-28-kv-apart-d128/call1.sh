# Call 1: build the configurations, the correctness grid on each, then the hot timing (one process).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
X=data/explorations/2026-11-28-kv-apart-d128/exp.py
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt
timeout 400 python $X check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "built|check|FAIL" $OUT/check.txt | cut -c1-200
timeout $(( 570 - ($(date +%s)-T0) )) python $X time 1.2 > $OUT/time_1.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
cut -c1-400 $OUT/time_1.txt | grep -v built
