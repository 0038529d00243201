source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
git apply .scratch/stalls/sleep_exp.patch || exit 1
X=.scratch/stalls/exp_sleep.py
T0=$(date +%s)
python $X check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"; cat $OUT/check.txt
for i in 1 2 3; do python $X time 2.0 > $OUT/time_$i.txt 2>&1; echo "time $i rc=$? $(( $(date +%s)-T0 )) s"; done
NCU=$(command -v ncu)
for l in s36 sleep_p sleep_all; do
  timeout 90 $NCU --clock-control none --nvtx --nvtx-include profile/ --csv --page raw --metrics smsp__inst_executed.sum,gpu__time_duration.sum,smsp__cycles_active.avg python $X ncu $l 1,16,16384,128 > $OUT/ncu_$l.csv 2>&1
  echo "ncu $l rc=$?"; tail -1 $OUT/ncu_$l.csv | cut -c1-400
done
tail -n 12 $OUT/time_*.txt
