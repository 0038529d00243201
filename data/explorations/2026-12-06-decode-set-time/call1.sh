# Device call 1 of data/explorations/2026-12-06-decode-set-time (issue 50, target 4), from the repository root,
# carry [".whl"]. The decode part of a run three times on one H100, old, new, old (stage.py), the first also
# building the decode steps (a fresh machine); records to $OUT.
# Expectation, written before the call: the old configuration's stage takes 60-70 s without its build (the RUN's
# 65.9 s: timing 37.0, profile 26.3); new saves 5-8 s of hot timing (a third to a half of the hot loops' 19.6 s:
# the same turns, half the GPU time in each sample) and 3-6 s of profile (one ncu process less), so 50-58 s;
# its hot medians within 1 % of old's at 90 % of the rows, its intervals' median half-width at most 1.5x old's.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-06-decode-set-time
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
for label in old new old; do
  timeout 300 python $E/stage.py $label /tmp/st > /tmp/log_$label.txt 2>&1; echo "$label rc=$?"
  n=$(ls /tmp/st/$label | wc -l); d=$(ls -td /tmp/st/$label/*/ | head -1)
  cp $d/decode.json $OUT/decode_${label}_$n.json; cat /tmp/log_$label.txt >> $OUT/log.txt
  grep -E "decode stage|decode profile|checks|Traceback|Error" /tmp/log_$label.txt | cut -c1-200
done
python $E/compare.py $OUT/decode_old_1.json $OUT/decode_new_1.json $OUT/decode_old_2.json | tee $OUT/compare.txt
